// The setup a py cell needs is checked before any cell's result is kept: an option that names a program follows
// one rule (a bare word on PATH, never the current folder; a path must be an executable file), nothing the
// runner or the check imports comes from the current folder, the
// interpreter must import torch and xxhash, the compile cache must be a folder it can write. Each
// failure is exit 2 naming the option, the word and why, with no journal left.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "cli_tools.h"

namespace {

using namespace testing_cli;

const std::string kExample = std::string(test_paths::kSourceDir) + "/examples/py/train_step.py:make";

class PythonSetup : public CliTest {
 protected:
  std::string program(const std::string& name, const std::string& body) {
    const auto file = write(name, "#!/bin/sh\n" + body + "\n");
    ::chmod(file.c_str(), 0755);
    return file;
  }
  // `arguments` run in `folder_` with no journal folder yet: exit 2, the message, no journal.
  void expect_refused(const std::string& arguments, const std::string& why, const std::string& prefix = "") {
    const auto result = shell("cd " + folder_.string() + " && " + prefix + " XDG_STATE_HOME=" + path("state") + " " +
                              binary() + " " + arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
    EXPECT_NE(result.output.find(why), std::string::npos) << arguments << "\n" << result.output;
    EXPECT_EQ(files_under(path("state")), "") << "a journal was written: " << arguments;
  }
  // The files under `folder`, one a line: the interpreter is checked while the audit starts, so the
  // journal's folder may have been made, but it must hold nothing once the audit is refused.
  static std::string files_under(const std::string& folder) {
    std::string files;
    std::error_code ignored;
    for (fs::recursive_directory_iterator it(folder, ignored), end; it != end; it.increment(ignored))
      if (!it->is_directory()) files += it->path().string() + "\n";
    return files;
  }
};

// A program planted in the current folder under the interpreter's name is never what a bare word
// runs, in any command that takes --python, nor through an empty PATH entry; PATH's is found.
TEST_F(PythonSetup, ABareWordIsLookedUpOnPathNeverInTheCurrentFolder) {
  fs::create_directories(path("bin"));
  program("python3", "touch " + path("planted-ran"));
  program("bin/shim-python", "echo not a python");
  const std::string on_path = "PATH=" + path("bin") + ":/usr/bin:/bin";
  for (const auto& command : {"py " + kExample + " --device cpu", std::string("selftest --device cpu --python-only")}) {
    expect_refused(command + " --python shim-python", "--python shim-python: " + path("bin/shim-python"), on_path);
    expect_refused(command + " --python python3", "--python python3: ", "PATH=:" + path("bin"));
    EXPECT_FALSE(fs::exists(path("planted-ran"))) << command;
  }
  expect_refused("explain " + path("none.json") + " --python shim-python",
                 "--python shim-python: " + path("bin/shim-python"), on_path);
  // A slash makes it a path: the planted program is then what the user asked for, and it runs.
  expect_refused("py " + kExample + " --device cpu --python ./python3", "--python ./python3: ");
  EXPECT_TRUE(fs::exists(path("planted-ran")));
}

// `python -c` puts the current folder first on sys.path. Modules planted where the user stands, under
// the names the runner and the interpreter check import (json, xxhash, struct, ctypes), are never
// imported: no marker appears, and the real modules digest the outputs (a module form callable still
// comes from the current folder, by name).
TEST_F(PythonSetup, ModulesInTheCurrentFolderNeverStandInForTheRunnersOwn) {
  const auto here = folder_ / "here";
  fs::create_directories(here);
  for (const std::string name : {"json", "xxhash", "struct", "ctypes", "inspect"})
    write("here/" + name + ".py", "import pathlib\npathlib.Path('" + path("ran-" + name) + "').touch()\n");
  write("here/mine.py", "import torch\ndef make(seed=0):\n    return torch.arange(8.0) * 3\n");
  const auto step = write("step.py", "import torch\ndef make(seed=0):\n    return torch.arange(8.0) * 3\n");
  const std::string common =
      " --device cpu --repeats 2 --processes 1 --no-cost --per-op off --profile default --axis threads=1";
  for (const auto& callable : {step + ":make", std::string("mine:make")}) {
    const auto result = shell("cd " + here.string() + " && " + binary() + " py " + callable + common + " --json " +
                              path("report.json"));
    if (result.output.find("no Python found next to the libtorch") != std::string::npos) GTEST_SKIP() << result.output;
    EXPECT_EQ(result.exit_code, 0) << callable << "\n" << result.output;
    EXPECT_NE(result.output.find("1 deterministic"), std::string::npos) << result.output;
    for (const std::string name : {"json", "xxhash", "struct", "ctypes", "inspect"})
      EXPECT_FALSE(fs::exists(path("ran-" + name))) << name << ".py in the current folder ran: " << callable;
  }
}

// A check limit too large for the clock (10^10 s) waits for the interpreter's answer (up to a day)
// instead of overflowing into a deadline already passed, which refused a working interpreter at once.
TEST_F(PythonSetup, AHugeCheckLimitWaitsForTheAnswerInsteadOfRefusingAtOnce) {
  const auto result = run("py " + kExample +
                              " --device cpu --repeats 2 --processes 1 --no-cost --per-op off --profile default "
                              "--axis threads=1",
                          "REPRO_AUDIT_PYTHON_CHECK_SECONDS=10000000000 XDG_STATE_HOME=" + path("state"));
  if (result.output.find("no Python found next to the libtorch") != std::string::npos) GTEST_SKIP() << result.output;
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("1 deterministic"), std::string::npos) << result.output;
}

TEST_F(PythonSetup, AnInterpreterThatCannotRunTheCallableIsRefusedBeforeAnyCell) {
  fs::create_directories(path("a-folder"));
  const auto py = "py " + kExample + " --device cpu --python ";
  expect_refused(py + path("a-folder"), "--python " + path("a-folder") + ": is a folder, not a program");
  expect_refused(py + path("missing"), "--python " + path("missing") + ": no such file");
  expect_refused(py + program("not-python", "echo hello >&2"), "not-python ended (exit 0) without answering: hello");
  const auto without_torch = program("python-without-torch", "exec python3 -S -I \"$@\"");
  expect_refused(py + without_torch, "this Python cannot import torch and xxhash: ModuleNotFoundError");
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  // torch, but an xxhash that does not import: the runner digests with it.
  fs::create_directories(path("no-xxhash"));
  write("no-xxhash/xxhash.py", "raise ImportError('no xxhash in this environment')\n");
  const auto without_xxhash =
      program("python-without-xxhash", "PYTHONPATH=" + path("no-xxhash") + " exec " + test_paths::kPython + " \"$@\"");
  expect_refused(py + without_xxhash, "cannot import torch and xxhash: ImportError: no xxhash in this environment");
  // A torch that is there but breaks on import: the check only finds it (each worker imports it), and
  // the first worker's import fails the audit as the machine's failure, naming it, with no cell judged.
  fs::create_directories(path("broken/torch"));
  write("broken/torch/__init__.py", "raise ImportError('a torch built for another Python')\n");
  const auto broken_torch =
      program("python-broken-torch", "PYTHONPATH=" + path("broken") + " exec " + test_paths::kPython + " \"$@\"");
  const auto broken = run(py + broken_torch + " --profile default --axis threads=1 --repeats 2 --processes 1 --no-cost",
                          "XDG_STATE_HOME=" + path("state"));
  EXPECT_EQ(broken.exit_code, 2) << broken.output;
  EXPECT_NE(broken.output.find("this Python cannot import torch: ImportError: a torch built for another Python"),
            std::string::npos)
      << broken.output;
  EXPECT_EQ(broken.output.find("exception"), std::string::npos) << "a cell was blamed\n" << broken.output;
}

// The interpreter is asked while the audit's first worker starts: a refusal that comes in after the
// journal was made takes the journal away again, so the same command runs once the interpreter is fixed.
TEST_F(PythonSetup, ARefusalLeavesNoJournalInTheWayOfTheSameCommand) {
  const auto journal = path("journal");
  const auto audit = "py " + kExample + " --device cpu --repeats 2 --processes 1 --no-cost --journal " + journal;
  const auto without_torch = program("python-without-torch", "exec python3 -S -I \"$@\"");
  const auto refused = run(audit + " --python " + without_torch);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("this Python cannot import torch and xxhash"), std::string::npos) << refused.output;
  EXPECT_EQ(files_under(journal), "");
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  const auto fixed = run(audit + " --python " + test_paths::kPython);
  EXPECT_LE(fixed.exit_code, 1) << fixed.output;  // judged, whatever the verdict
  EXPECT_TRUE(fs::exists(fs::path(journal) / "audit.json")) << fixed.output;
}

TEST_F(PythonSetup, ACompileCacheThatIsNoWritableFolderIsRefusedBeforeAnyCell) {
  const auto py = "py " + kExample + " --device cpu --compile-cache ";
  const auto file = write("a-file", "x");
  expect_refused(py + file, "--compile-cache " + file + ": is a file, not a folder");
  fs::create_symlink(path("loop-b"), path("loop-a"));
  fs::create_symlink(path("loop-a"), path("loop-b"));
  expect_refused(py + path("loop-a") + "/cache", "--compile-cache " + path("loop-a") + "/cache: cannot be made");
  expect_refused(py + file + "/cache", "--compile-cache " + file + "/cache: cannot be made");
  // A folder this user cannot write: root writes through permission bits, not into sysfs.
  const std::string read_only = ::geteuid() == 0 ? "/sys/kernel" : path("read-only");
  if (::geteuid() != 0) {
    fs::create_directories(read_only);
    ::chmod(read_only.c_str(), 0555);
  }
  if (fs::is_directory(read_only))
    expect_refused(py + read_only, "--compile-cache " + read_only + ": cannot be written");
}

// A full disk under a py cell is the machine failing the audit (exit 2 naming it), not the callable's verdict.
TEST_F(PythonSetup, NoSpaceLeftInACellIsTheMachinesFailure) {
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  const auto callable =
      write("full.py",
            "import errno, torch\n"
            "def make():\n"
            "    raise OSError(errno.ENOSPC, 'No space left on device', '/tmp/torchinductor/x.so')\n");
  const auto result = run("py " + callable +
                          ":make --device cpu --profile default --axis threads=1 --repeats 2 "
                          "--processes 1 --no-cost --python " +
                          test_paths::kPython + " --journal " + path("journal"));
  if (result.output.find("cannot import torch and xxhash") != std::string::npos)
    GTEST_SKIP() << "the Python next to libtorch lacks xxhash";
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("no space left on device while the py cell py.full-make/call@cpu|threads=1 ran"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("exception"), std::string::npos) << result.output;
}

// The digests rest on xxhash. One that PYTHONPATH puts in its place and that answers a constant would
// make a step returning os.urandom bytes deterministic: it is refused by its file before any cell, and
// the report of an audit says which xxhash digested it.
TEST_F(PythonSetup, AnXxhashThatIsNotXxh3IsRefusedAndTheOneUsedIsRecordedWithTestSwitches) {
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  const auto random =
      write("random_step.py",
            "import os, torch\ndef make(seed=0):\n    return torch.frombuffer(bytearray(os.urandom(64)), "
            "dtype=torch.uint8)\n");
  fs::create_directories(path("planted"));
  const auto planted = write("planted/xxhash.py",
                             "VERSION = '9.9.9'\nclass xxh3_128:\n    def __init__(self, *args):\n        pass\n"
                             "    def update(self, data):\n        pass\n    def hexdigest(self):\n"
                             "        return '0' * 32\ndef xxh3_128_hexdigest(data):\n    return '0' * 32\n");
  const auto stand_in =
      program("python-planted-xxhash", "PYTHONPATH=" + path("planted") + " exec " + test_paths::kPython + " \"$@\"");
  const std::string audit = "py " + random +
                            ":make --device cpu --profile default --axis threads=1 --repeats 2 --processes 1 "
                            "--no-cost --per-op off --json " +
                            path("report.json") + " --python ";
  const auto refused = run(audit + stand_in, "XDG_STATE_HOME=" + path("state"));
  if (refused.output.find("cannot import torch and xxhash") != std::string::npos)
    GTEST_SKIP() << "the Python next to libtorch lacks xxhash";
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("the xxhash module " + planted), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("not XXH3-128's 99aa06d3014798d86001c324468d497f"), std::string::npos)
      << refused.output;
  EXPECT_EQ(refused.output.find("deterministic"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(path("report.json"))) << "a report was written";
  // The real one: the step's random bytes differ, and the report names the xxhash that said so.
  const auto real = run(audit + test_paths::kPython, "XDG_STATE_HOME=" + path("state"));
  EXPECT_EQ(real.exit_code, 1) << real.output;  // a py cell that diverges fails the audit
  const auto report = nlohmann::json::parse(slurp(path("report.json")));
  EXPECT_EQ(report.at("cells").at(0).at("verdict"), "nondeterministic") << real.output;
  const auto environment = report.at("environment");
  const auto recorded = environment.value("python_xxhash", "");
  EXPECT_NE(recorded.find("xxhash/__init__.py)"), std::string::npos) << environment.dump(1);
  EXPECT_EQ(recorded.find(path("planted")), std::string::npos) << recorded;
  EXPECT_FALSE(environment.contains("test_switches")) << environment.dump(1);
  // A test switch in the user's environment changes what the runner records: the report says it was set.
  const auto switched =
      run(audit + test_paths::kPython, "XDG_STATE_HOME=" + path("state") + " REPRO_AUDIT_TEST_HOST_WORD_SUMS=1");
  EXPECT_EQ(switched.exit_code, 1) << switched.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(path("report.json"))).at("environment").value("test_switches", ""),
            "REPRO_AUDIT_TEST_HOST_WORD_SUMS=1");
}

// A resumed audit whose interpreter is gone stops as the machine's failure and journals nothing for its
// cells: once the interpreter is back, the next --resume runs them, never keeping "cannot start" as a verdict.
TEST_F(PythonSetup, AResumeWithoutItsInterpreterRunsTheCellsOnceItIsBack) {
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  const auto step = write("slow_step.py",
                          "import time, torch\ndef make(seed=0):\n    time.sleep(0.5)\n"
                          "    return torch.arange(8.0) * 3\n");
  fs::create_directories(path("bin"));
  const auto interpreter = program("bin/python3", std::string("exec ") + test_paths::kPython + " \"$@\"");
  const auto journal = path("journal");
  const auto state = "XDG_STATE_HOME=" + path("state");
  const auto pid = start_group("py " + step +
                                   ":make --device cpu --profile default --axis threads=1,2,3 --repeats 2 "
                                   "--processes 1 --no-cost --per-op off --python " +
                                   interpreter + " --journal " + journal,
                               path("log"), state);
  ASSERT_TRUE(wait_until([&] { return count_files(journal, "cell-") > 0; }, pid)) << slurp(path("log"));
  ::kill(pid, SIGINT);
  ASSERT_EQ(wait_exit(pid), 130) << slurp(path("log"));
  const auto finished = count_files(journal, "cell-");
  fs::remove(interpreter);
  // --no-cost again: a resume takes the run options anew (the slow step's timing rounds took 29 s here).
  const auto missing = run("py --resume " + journal + " --no-cost", state);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("the py cells' interpreter cannot be started: cannot start " + interpreter),
            std::string::npos)
      << missing.output;
  EXPECT_EQ(count_files(journal, "cell-"), finished) << "a cell that could not start was journaled";
  program("bin/python3", std::string("exec ") + test_paths::kPython + " \"$@\"");
  const auto back = run("py --resume " + journal + " --no-cost --json " + path("report.json"), state);
  EXPECT_EQ(back.exit_code, 0) << back.output;
  EXPECT_NE(back.output.find("3 deterministic"), std::string::npos) << back.output;
}

}  // namespace

namespace {

std::string proc(pid_t pid, const std::string& file) { return slurp("/proc/" + std::to_string(pid) + "/" + file); }

bool ignores_sigint(pid_t pid) {
  std::istringstream status(proc(pid, "status"));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigIgn:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) & (1u << (SIGINT - 1))) != 0;
  return false;
}

// A py cell's worker is its interpreter, started by the audit itself (no `repro-audit worker` loads
// libtorch first), and set up as a C++ worker sets itself up: Ctrl-C ignored (the audit ends its
// workers), its data size limited, and gone with the audit when the audit is killed with SIGKILL.
TEST_F(PythonSetup, APyWorkerIsTheInterpreterSetUpAsAWorkerIsAndDiesWithTheAudit) {
  if (std::string(test_paths::kPython).empty()) GTEST_SKIP() << "no Python with torch next to libtorch";
  const auto running = path("running");  // the step says it runs: the worker then writes nothing for 600 s
  const auto step =
      write("sleepy_step.py", "import time, torch\ndef make(seed=0):\n    open(" + nlohmann::json(running).dump() +
                                  ", 'w').close()\n    time.sleep(600)\n");
  const auto pid = start_group("py " + step +
                                   ":make --device cpu --profile default --axis threads=1 --repeats 2 "
                                   "--processes 1 --no-cost --per-op off --python " +
                                   test_paths::kPython,
                               path("log"), "XDG_STATE_HOME=" + path("state"));
  pid_t worker = 0;
  const auto set_up = [&] {  // the runner's first lines ignore SIGINT
    if (!fs::exists(running)) return false;
    for (const pid_t child : children_of(pid))
      if (proc(child, "cmdline").find("repro-audit-python-runner") != std::string::npos && ignores_sigint(child)) {
        worker = child;
        return true;
      }
    return false;
  };
  ASSERT_TRUE(wait_until(set_up, pid)) << slurp(path("log"));
  const auto command = proc(worker, "cmdline");
  EXPECT_EQ(command.substr(0, command.find('\0')), test_paths::kPython) << "the worker is not the interpreter";
  for (const pid_t child : children_of(pid)) {
    const auto program = proc(child, "cmdline");
    EXPECT_EQ(fs::path(program.substr(0, program.find('\0'))).filename().string().rfind("repro-audit", 0),
              std::string::npos)
        << "a repro-audit process ran beside the interpreter: " << program.substr(0, 200);
  }
  const auto limits = proc(worker, "limits");
  const auto data = limits.find("Max data size");
  ASSERT_NE(data, std::string::npos) << limits;
  EXPECT_NE(limits.substr(data + 13, limits.find('\n', data) - data - 13).find_first_of("0123456789"),
            std::string::npos)
      << "no limit on its data size: " << limits;
  ::kill(pid, SIGKILL);
  wait_exit(pid);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive(worker) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(worker)) << "the py worker outlived its killed audit";
  if (alive(worker)) ::kill(worker, SIGKILL);
}

}  // namespace
