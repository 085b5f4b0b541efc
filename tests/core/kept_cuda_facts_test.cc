// The CUDA facts a worker of repro-audit-torch keeps where no driver loads, and when a later audit may take them.
#include "fingerprint/kept_cuda_facts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json kDriverless = {{"torch", "2.14.1"},
                          {"torch_cuda_build", true},
                          {"cuda", {{"available", false}, {"driver", 0}, {"runtime", 13000}, {"cudnn", 92400}}},
                          {"sources",
                           {{"torch", "TORCH_VERSION"},
                            {"cuda", "the CUDA runtime, cuDNN, cuBLAS, NCCL and NVML"},
                            {"cuda.runtime", "cudaRuntimeGetVersion()"}}}};

class KeptCudaFacts : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-kept-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_ / "lib");
    write(program_ = (folder_ / "repro-audit-torch").string(), "program");
    write(library_ = (folder_ / "lib" / "libcudart.so.13").string(), "library");
    variables_ = {"HOME=/nonexistent-home", "XDG_CACHE_HOME=" + (folder_ / "cache").string(),
                  "LD_LIBRARY_PATH=/opt/lib", "CUDA_MODULE_LOADING=LAZY", "OMP_NUM_THREADS=2"};
  }
  void TearDown() override { fs::remove_all(folder_); }
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  // A NULL-ended environment of `variables_`.
  std::vector<char*> environment() {
    std::vector<char*> pointers;
    for (auto& variable : variables_) pointers.push_back(variable.data());
    pointers.push_back(nullptr);
    return pointers;
  }
  void keep(const json& fingerprint = kDriverless) {
    keep_cuda_facts(fingerprint, program_, {library_}, environment().data());
  }
  std::optional<json> kept() { return kept_cuda_facts(program_, environment().data()); }

  fs::path folder_;
  std::string program_, library_;
  std::vector<std::string> variables_;
};

TEST_F(KeptCudaFacts, AreTakenWhileNothingTheyDependOnChangedAndSayWhereTheyCameFrom) {
  EXPECT_FALSE(kept());
  keep();
  const auto file = kept_cuda_facts_file(program_, environment().data());
  EXPECT_EQ(fs::path(file).parent_path(), folder_ / "cache" / "repro-audit");
  ASSERT_TRUE(fs::exists(file));
  const auto facts = kept();
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->at("cuda"), kDriverless.at("cuda"));
  EXPECT_EQ(facts->at("torch_cuda_build"), true);
  EXPECT_FALSE(facts->contains("torch"));  // the CUDA facts alone
  EXPECT_EQ(facts->at("sources").at("cuda.runtime"), "cudaRuntimeGetVersion()");
  EXPECT_FALSE(facts->at("sources").contains("torch"));
  const auto runtime = facts->at("sources").at("cuda").get<std::string>();
  EXPECT_EQ(runtime.rfind("the CUDA runtime, cuDNN, cuBLAS, NCCL and NVML (read by repro-audit-torch at ", 0), 0u)
      << runtime;
  EXPECT_NE(runtime.find("the 1 libraries its process had loaded"), std::string::npos) << runtime;

  // Variables that steer neither the loader nor CUDA, and CUDA_MODULE_LOADING (libtorch sets it): the same.
  variables_[3] = "CUDA_MODULE_LOADING=EAGER";
  variables_[4] = "OMP_NUM_THREADS=8";
  EXPECT_TRUE(kept());
  variables_.push_back("CUDA_VISIBLE_DEVICES=1");
  EXPECT_FALSE(kept());
  variables_.pop_back();
  variables_[2] = "LD_LIBRARY_PATH=/opt/other";
  EXPECT_FALSE(kept());
  variables_[2] = "LD_LIBRARY_PATH=/opt/lib";
  EXPECT_TRUE(kept());

  // A library changed in place, or the program: kept no more.
  write(library_, "library, updated");
  EXPECT_FALSE(kept());
  keep();
  EXPECT_TRUE(kept());
  fs::last_write_time(program_, fs::last_write_time(program_) + std::chrono::seconds(1));
  EXPECT_FALSE(kept());
  keep();
  fs::remove(library_);
  EXPECT_FALSE(kept());
}

TEST_F(KeptCudaFacts, OnlyADriverlessMachinesFactsAreKept) {
  auto with_device = kDriverless;
  with_device["cuda"]["available"] = true;
  with_device["cuda"]["driver"] = 13000;
  keep(with_device);
  EXPECT_FALSE(fs::exists(kept_cuda_facts_file(program_, environment().data())));
  auto with_driver = kDriverless;
  with_driver["cuda"]["driver"] = 12080;  // a driver too old for the runtime: no device, but a driver
  keep(with_driver);
  auto cpu_build = kDriverless;
  cpu_build["torch_cuda_build"] = false;
  keep(cpu_build);
  keep(json("not a fingerprint"));
  EXPECT_FALSE(kept());
}

TEST_F(KeptCudaFacts, AFileThatIsNotTheirsIsNotTakenAndNoCacheFolderKeepsNothing) {
  keep();
  const auto file = kept_cuda_facts_file(program_, environment().data());
  auto text = json::parse(std::ifstream(file));
  text["facts"]["cuda"] = "not an object";
  write(file, text.dump());
  EXPECT_FALSE(kept());
  write(file, "{ not JSON");
  EXPECT_FALSE(kept());
  text = json::array();
  write(file, text.dump());
  EXPECT_FALSE(kept());
  keep();
  text = json::parse(std::ifstream(file));
  text["kept_at"] = "\u001b[31m an hour ago";  // the time goes into the report only as the tool writes one
  write(file, text.dump());
  ASSERT_TRUE(kept());
  EXPECT_NE(kept()->at("sources").at("cuda").get<std::string>().find("at an earlier audit and kept"),
            std::string::npos);
  fs::remove(file);
  keep();  // written again over what was not a kept file
  EXPECT_TRUE(kept());
  // Read as every input file is: a FIFO put there (which nothing writes) is refused unread, never waited
  // on, and the next keep replaces it; facts nested deeper than an input may nest are not taken.
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(kept());
  keep();
  EXPECT_TRUE(fs::is_regular_file(file));
  ASSERT_TRUE(kept());
  text = json::parse(std::ifstream(file));
  auto deep = json::array();
  for (int level = 0; level < 100; ++level) deep = json::array({deep});
  text["facts"]["cuda"]["deep"] = deep;
  write(file, text.dump());
  EXPECT_FALSE(kept());
  keep();
  EXPECT_TRUE(kept());

  // Another program's facts are another file: one of a program that is gone is removed as another is kept.
  const auto other = (folder_ / "other-torch").string();
  write(other, "other program");
  keep_cuda_facts(kDriverless, other, {library_}, environment().data());
  ASSERT_TRUE(fs::exists(kept_cuda_facts_file(other, environment().data())));
  EXPECT_NE(kept_cuda_facts_file(other, environment().data()), file);
  const auto other_file = kept_cuda_facts_file(other, environment().data());
  fs::remove(other);
  write(library_, "library, updated");  // so that keep() writes
  keep();
  EXPECT_FALSE(fs::exists(other_file));
  EXPECT_TRUE(kept());

  variables_ = {"HOME=relative/home", "XDG_CACHE_HOME=relative/cache"};  // neither is a place (XDG: ignored)
  EXPECT_EQ(kept_cuda_facts_file(program_, environment().data()), "");
  keep();
  EXPECT_FALSE(kept());
  variables_ = {"HOME=" + (folder_ / "home").string()};
  EXPECT_EQ(fs::path(kept_cuda_facts_file(program_, environment().data())).parent_path(),
            folder_ / "home" / ".cache" / "repro-audit");
}

TEST(LoadedLibraries, AreThisProcesssSharedLibrariesByAbsolutePath) {
  const auto libraries = loaded_libraries();
  ASSERT_FALSE(libraries.empty());
  bool libc = false;
  for (const auto& library : libraries) {
    EXPECT_EQ(library.front(), '/') << library;
    libc = libc || fs::path(library).filename().string().rfind("libc.so", 0) == 0;
  }
  EXPECT_TRUE(libc);
}

}  // namespace
}  // namespace repro_audit
