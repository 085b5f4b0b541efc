// Hostile inputs, `selftest --python`: an interpreter that cannot start, has no torch or hangs is one
// clear sentence and exit 2, before the control audit runs, and nothing is left in /tmp. The parity run
// itself (repro/parity.h) turns a script that cannot start or hangs into results, never an abort or an
// hour of waiting.
#include <sys/stat.h>

#include "cli_tools.h"
#include "repro/parity.h"
#include "report/json_io.h"

namespace {

using namespace testing_cli;

class SecurityPython : public CliTest {
 protected:
  // A script standing in for a Python interpreter.
  std::string interpreter(const std::string& name, const std::string& body) {
    const auto file = write(name, "#!/bin/sh\n" + body + "\n");
    ::chmod(file.c_str(), 0755);
    return file;
  }
  void expect_refused(const std::string& python, const std::string& why, const std::string& prefix = "") {
    // A TMPDIR of the test's own: other tests' parity runs make their folders in /tmp meanwhile.
    const auto temporary = path("tmp");
    fs::create_directories(temporary);
    const auto begun = std::chrono::steady_clock::now();
    const auto result = run("selftest --device cpu --python " + python, "TMPDIR=" + temporary + " " + prefix);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find(why), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("control"), std::string::npos) << "the control audit ran first: " << result.output;
    EXPECT_EQ(result.output.find("Python parity"), std::string::npos) << result.output;
    // The control audit alone takes minutes; the check, a second (the hang: its 2 s limit).
    EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(30));
    EXPECT_EQ(count_files(temporary, "repro-audit-parity-"), 0);
  }
};

TEST_F(SecurityPython, PythonOnlyNeedsAnInterpreterAndWritesNoControlReport) {
  for (const auto* arguments : {"selftest --python-only", "selftest --python python3 --python-only --json x.json"}) {
    const auto result = run(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
    EXPECT_EQ(result.output.find("control"), std::string::npos) << result.output;
  }
}

TEST_F(SecurityPython, OneThatCannotStartSaysWhy) {
  expect_refused("/nonexistent/python", "--python /nonexistent/python: no such file");
  const auto folder = path("a-folder");
  fs::create_directories(folder);
  expect_refused(folder, "--python " + folder + ": is a folder, not a program");
  const auto not_executable = write("python-not-executable", "#!/bin/sh\n");
  ::chmod(not_executable.c_str(), 0644);
  expect_refused(not_executable, not_executable + ": is not executable");
  const auto no_format = write("python-of-no-format", "not a program\n");  // no #! line: ENOEXEC
  ::chmod(no_format.c_str(), 0755);
  expect_refused(no_format, no_format + " cannot be started: Exec format error");
}

TEST_F(SecurityPython, ABareNameIsLookedUpOnPath) {
  interpreter("python-on-path", "exec python3 -S -I \"$@\"");
  expect_refused("python-on-path", path("python-on-path") + ": this Python cannot import torch",
                 "PATH=" + folder_.string() + ":$PATH");
  expect_refused("no-such-python-anywhere", "--python no-such-python-anywhere: no such program on PATH");
}

TEST_F(SecurityPython, OneWithoutTorchIsSaidSo) {
  // Python without site-packages: no torch there (checked, so that the test proves something).
  const auto python = interpreter("python-without-torch", "exec python3 -S -I \"$@\"");
  const auto imported = shell(python + " -c 'import torch'");
  ASSERT_NE(imported.exit_code, 0) << "this Python can import torch: " << imported.output;
  expect_refused(python, "this Python cannot import torch: ModuleNotFoundError: No module named 'torch'");
}

TEST_F(SecurityPython, OneThatHangsIsStopped) {
  // exec: the shell becomes the sleep, so stopping it leaves no process behind.
  expect_refused(interpreter("python-that-hangs", "exec sleep 1000"), "did not answer within 2 s",
                 "REPRO_AUDIT_PYTHON_CHECK_SECONDS=2");
}

TEST_F(SecurityPython, OneThatFailsOtherwiseShowsItsError) {
  expect_refused(interpreter("python-that-fails", "echo 'Fatal Python error: init_fs_encoding' >&2; exit 1"),
                 "init_fs_encoding");
}

TEST_F(SecurityPython, AnEmptyPathIsRefused) {
  const auto result = run("selftest --device cpu --python ''");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--python: give a Python interpreter's name (looked up on PATH) or its path"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("control"), std::string::npos) << result.output;
}

// run_parity on a real report of four cells, with interpreters that fail each cell's script.
class SecurityPythonParity : public SecurityPython {
 protected:
  void SetUp() override {
    SecurityPython::SetUp();
    // One audit for every test of the build (read only).
    const auto report_path = shared_report("cumsum-strict", "--probe cumsum --device cpu --profile strict --no-cost");
    ASSERT_FALSE(report_path.empty());
    report_ = repro_audit::load_report_file(report_path);
    ASSERT_EQ(report_.cells.size(), 4u);
    repro_audit::ProbeInfo cumsum{.name = "cumsum"};
    cumsum.variants = {{.name = "f32", .dtype = repro_audit::DType::f32},
                       {.name = "f64", .dtype = repro_audit::DType::f64}};
    cumsum.python.code = "return {'output': torch.cumsum(x, 0)}";
    catalogue_ = {cumsum};
    fs::create_directories(path("tmp"));
  }
  repro_audit::ParityOptions options(const std::string& python) {
    return {python, path("scripts"), binary(), path("tmp"), 2, 1};
  }
  repro_audit::Report report_;
  repro_audit::Catalogue catalogue_;
};

TEST_F(SecurityPythonParity, AScriptThatCannotStartIsItsCellsFailure) {
  const auto result = repro_audit::run_parity(report_, catalogue_, options(path("no-such-python")));
  ASSERT_EQ(result.cells.size(), 4u);
  for (const auto& cell : result.cells) {
    EXPECT_EQ(cell.status, "mismatch") << cell.key;
    EXPECT_NE(cell.detail.find("did not run: cannot start"), std::string::npos) << cell.detail;
  }
  EXPECT_EQ(result.failures(), 4);
}

TEST_F(SecurityPythonParity, TheFirstScriptThatHangsStopsTheRest) {
  auto parity = options(interpreter("python-that-hangs", "exec sleep 1000"));
  parity.script_time_limit = std::chrono::seconds(2);
  const auto begun = std::chrono::steady_clock::now();
  const auto result = repro_audit::run_parity(report_, catalogue_, parity);
  // One script's limit, then the interpreter asked again (as long): not a limit per script.
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(20));
  ASSERT_EQ(result.cells.size(), 4u);
  const auto& hung = result.cells[0];
  EXPECT_EQ(hung.status, "mismatch");
  EXPECT_NE(hung.detail.find("did not answer within 2 s"), std::string::npos) << hung.detail;
  EXPECT_NE(hung.detail.find("asked again: "), std::string::npos) << hung.detail;
  for (std::size_t i = 1; i < result.cells.size(); ++i) {
    EXPECT_EQ(result.cells[i].status, "not run") << result.cells[i].key;
    EXPECT_NE(result.cells[i].detail.find("the script of " + hung.key + " did not answer"), std::string::npos)
        << result.cells[i].detail;
  }
  EXPECT_EQ(result.failures(), 1);
  EXPECT_EQ(result.not_run(), 3);
}

}  // namespace
