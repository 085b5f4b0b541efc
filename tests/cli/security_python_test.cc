// Hostile inputs, `selftest --python`: an interpreter that cannot start, has no torch or hangs is one
// clear sentence and exit 2, before the control audit runs, and nothing is left in /tmp.
#include <sys/stat.h>

#include "cli_tools.h"

namespace {

using namespace testing_cli;

int parity_folders() { return count_files("/tmp", "repro-audit-parity-"); }

class BadInterpreter : public CliTest {
 protected:
  // A script standing in for a Python interpreter.
  std::string interpreter(const std::string& name, const std::string& body) {
    const auto file = write(name, "#!/bin/sh\n" + body + "\n");
    ::chmod(file.c_str(), 0755);
    return file;
  }
  void expect_refused(const std::string& python, const std::string& why, const std::string& prefix = "") {
    const int before = parity_folders();
    const auto begun = std::chrono::steady_clock::now();
    const auto result = run("selftest --device cpu --python " + python, prefix);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find(why), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("control"), std::string::npos) << "the control audit ran first: " << result.output;
    EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(60));
    EXPECT_EQ(parity_folders(), before);
  }
};

TEST_F(BadInterpreter, OneThatCannotStartIsSaidAtOnce) {
  expect_refused(path("no-such-python"), "cannot be started");
  const auto folder = path("a-folder");
  fs::create_directories(folder);
  expect_refused(folder, "cannot be started");
}

TEST_F(BadInterpreter, OneWithoutTorchIsSaidSo) {
  // Python without site-packages: no torch there.
  expect_refused(interpreter("python-without-torch", "exec python3 -S -I \"$@\""), "cannot import torch");
}

TEST_F(BadInterpreter, OneThatHangsIsStopped) {
  expect_refused(interpreter("python-that-hangs", "exec sleep 600"), "did not answer within 2 s",
                 "REPRO_AUDIT_PYTHON_CHECK_SECONDS=2");
}

TEST_F(BadInterpreter, OneThatFailsOtherwiseShowsItsError) {
  expect_refused(interpreter("python-that-fails", "echo 'Fatal Python error: init_fs_encoding' >&2; exit 1"),
                 "init_fs_encoding");
}

}  // namespace
