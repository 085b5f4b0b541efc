// Where an output's content goes: links followed to the file they name, devices, FIFOs and this
// process's descriptors written through, never replaced; what cannot take content refused.
#include "common/output_target.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/user_error.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

class OutputTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-output-target-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_ / "real");
  }
  void TearDown() override { fs::remove_all(folder_); }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path folder_;
};

TEST_F(OutputTargetTest, AFileOrNothingIsReplacedInPlace) {
  EXPECT_EQ(resolve_output(path("new.json")).kind, OutputTarget::Kind::replace);
  EXPECT_EQ(resolve_output(path("new.json")).path, path("new.json"));
  std::ofstream(path("old.json")) << "old";
  EXPECT_EQ(resolve_output(path("old.json")).kind, OutputTarget::Kind::replace);
}

TEST_F(OutputTargetTest, LinksLeadToTheFileTheyName) {
  fs::create_symlink("real/report.json", path("relative.json"));  // not there yet
  fs::create_symlink(path("relative.json"), path("chain.json"));
  for (const auto* link : {"relative.json", "chain.json"}) {
    const auto target = resolve_output(path(link));
    EXPECT_EQ(target.kind, OutputTarget::Kind::replace) << link;
    EXPECT_EQ(fs::weakly_canonical(target.path), fs::weakly_canonical(path("real/report.json"))) << link;
  }
  write_file_atomically(path("chain.json"), "first");
  write_files_atomically({{path("relative.json"), "second"}});
  EXPECT_TRUE(fs::is_symlink(path("chain.json")));
  EXPECT_TRUE(fs::is_symlink(path("relative.json")));
  EXPECT_EQ(read(path("real/report.json")), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(path("real")), fs::directory_iterator()), 1);
}

TEST_F(OutputTargetTest, DevicesAndFifosAreWrittenThrough) {
  EXPECT_EQ(resolve_output("/dev/null").kind, OutputTarget::Kind::write_through);
  fs::create_symlink("/dev/null", path("null.json"));
  EXPECT_EQ(resolve_output(path("null.json")).kind, OutputTarget::Kind::write_through);
  write_file_atomically(path("null.json"), "gone");
  EXPECT_TRUE(fs::is_symlink(path("null.json")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  fs::create_symlink(path("pipe"), path("to-pipe.json"));
  EXPECT_EQ(resolve_output(path("to-pipe.json")).kind, OutputTarget::Kind::write_through);
  std::string received;
  std::thread reader([&] { received = read(path("pipe")); });
  const auto failures = write_files_atomically({{path("to-pipe.json"), "through the pipe"}, {path("a.json"), "a"}});
  reader.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(path("pipe")));
  EXPECT_EQ(read(path("a.json")), "a");
}

TEST_F(OutputTargetTest, StandardOutputAndOpenDescriptorsAreWrittenWhereTheyPoint) {
  fs::create_symlink("/dev/stdout", path("stdout.json"));
  if (::fcntl(1, F_GETFD) >= 0) {
    const auto target = resolve_output(path("stdout.json"));
    EXPECT_EQ(target.kind, OutputTarget::Kind::descriptor);
    EXPECT_EQ(target.descriptor, 1);
  }
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const auto written = "/dev/fd/" + std::to_string(ends[1]);
  EXPECT_EQ(resolve_output(written).descriptor, ends[1]);
  write_file_atomically(written, "on the descriptor");
  ::close(ends[1]);
  char buffer[64] = {};
  EXPECT_EQ(::read(ends[0], buffer, sizeof buffer), 17);
  EXPECT_STREQ(buffer, "on the descriptor");
  ::close(ends[0]);
  EXPECT_TRUE(fs::is_symlink("/dev/stdout") || !fs::exists("/dev/stdout"));
}

TEST_F(OutputTargetTest, WhatCannotTakeContentIsRefusedAndNothingIsWritten) {
  fs::create_symlink(path("real"), path("folder.json"));
  fs::create_symlink(path("loop-b"), path("loop-a"));
  fs::create_symlink(path("loop-a"), path("loop-b"));
  EXPECT_EQ(resolve_output(path("folder.json")).reason, "is a folder; give a file name");
  EXPECT_EQ(resolve_output(path("loop-a")).reason, "too many levels of links");
  const auto failures = write_files_atomically({{path("loop-a"), "x"}, {path("folder.json"), "y"}});
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0], path("loop-a") + ": too many levels of links");
  EXPECT_TRUE(fs::is_symlink(path("loop-a")));
  EXPECT_THROW(write_file_atomically(path("folder.json"), "y"), UserError);
  EXPECT_TRUE(fs::is_empty(path("real")));
}

}  // namespace
}  // namespace repro_audit
