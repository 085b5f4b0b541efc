// The rule for options that name a program: a bare word is looked up on PATH (never the current
// folder unless PATH names it), a word with a slash is a path, and either must be an executable file.
#include "common/program_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/user_error.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

class ProgramPath : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-program-path-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_ / "bin");
    fs::create_directories(folder_ / "work");
    previous_ = fs::current_path();
    fs::current_path(folder_ / "work");
  }
  void TearDown() override {
    fs::current_path(previous_);
    fs::remove_all(folder_);
  }
  std::string program(const fs::path& path, mode_t mode = 0755) {
    std::ofstream(path) << "#!/bin/sh\n";
    ::chmod(path.c_str(), mode);
    return path.string();
  }
  fs::path folder_;
  fs::path previous_;
};

TEST_F(ProgramPath, ABareNameIsFoundOnPathAsAnAbsolutePath) {
  const auto python = program(folder_ / "bin" / "python3");
  const auto found = find_program("python3", "/nonexistent:" + (folder_ / "bin").string());
  EXPECT_EQ(found.problem, "");
  EXPECT_EQ(found.path, python);
}

TEST_F(ProgramPath, ABareNameNeverRunsAProgramInTheCurrentFolderUnlessPathNamesIt) {
  program(folder_ / "work" / "python3");  // planted where the tool is started
  const auto bin = (folder_ / "bin").string();
  for (const auto& search_path : {bin, bin + ":", ":" + bin, bin + "::/nonexistent", std::string()}) {
    const auto found = find_program("python3", search_path);
    EXPECT_EQ(found.path, "") << "PATH=" << search_path;
    EXPECT_NE(found.problem.find("no such program on PATH"), std::string::npos) << found.problem;
  }
  // PATH that names the current folder explicitly is obeyed, as a shell would.
  EXPECT_EQ(find_program("python3", bin + ":.").path, (folder_ / "work" / "python3").string());
  // A slash makes it a path, relative to the current folder.
  EXPECT_EQ(find_program("./python3", bin).path, (folder_ / "work" / "python3").string());
}

TEST_F(ProgramPath, FoldersAndFilesWithoutTheExecuteBitOnPathArePassedOver) {
  fs::create_directories(folder_ / "first" / "python3");
  fs::create_directories(folder_ / "second");
  program(folder_ / "second" / "python3", 0644);
  const auto python = program(folder_ / "bin" / "python3");
  const auto search_path =
      (folder_ / "first").string() + ":" + (folder_ / "second").string() + ":" + (folder_ / "bin").string();
  EXPECT_EQ(find_program("python3", search_path).path, python);
}

TEST_F(ProgramPath, APathMustBeAnExecutableRegularFile) {
  EXPECT_EQ(find_program((folder_ / "missing").string(), "").problem, "no such file");
  EXPECT_EQ(find_program((folder_ / "bin").string(), "").problem, "is a folder, not a program");
  EXPECT_EQ(find_program("/dev/null", "").problem, "is not a regular file");
  const auto plain = program(folder_ / "plain", 0644);
  EXPECT_NE(find_program(plain, "").problem.find("is not executable"), std::string::npos);
  const auto good = program(folder_ / "good");
  EXPECT_EQ(find_program(good, "").path, good);
  EXPECT_EQ(find_program(good, "").problem, "");
}

TEST_F(ProgramPath, TheErrorNamesTheOptionTheWordAndWhy) {
  try {
    program_path("--python", "./no-such-python");
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "--python ./no-such-python: no such file");
  }
  EXPECT_THROW(program_path("--python", ""), UserError);
}

}  // namespace
}  // namespace repro_audit
