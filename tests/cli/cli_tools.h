#pragma once
// Running the real binary from CLI tests: to the end, or in the background in a process group of
// its own (so a test can send it what a terminal's Ctrl-C sends: a signal to the whole group).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include "fingerprint/numerics_environment.h"
#include "test_paths.h"

extern char** environ;

namespace testing_cli {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// The binary's path. Under REPRO_AUDIT_TEST_PROFILE=DIR (tools/test-profile) every audit the running
// test starts appends a line to DIR/<test>.jsonl saying where its time went (REPRO_AUDIT_AUDIT_LOG,
// audit/audit.cc): set in this process's environment, which each command started here inherits.
inline std::string binary() {
  const char* profile = std::getenv("REPRO_AUDIT_TEST_PROFILE");
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (profile && *profile && test)
    setenv("REPRO_AUDIT_AUDIT_LOG",
           (std::string(profile) + "/" + test->test_suite_name() + "." + test->name() + ".jsonl").c_str(), 1);
  return test_paths::kBinary;
}

// A shell command's exit code and its stdout and stderr.
inline Result shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  while (auto n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// `prefix` goes before the binary, e.g. "TERM=dumb" or "env -u TMPDIR".
inline Result run(const std::string& arguments, const std::string& prefix = "") {
  return shell(prefix + (prefix.empty() ? "" : " ") + binary() + " " + arguments);
}

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Starts `binary arguments > output 2>&1` as the leader of a new process group; `prefix` holds
// environment assignments, e.g. "TMPDIR=/x".
inline pid_t start_group(const std::string& arguments, const fs::path& output, const std::string& prefix = "") {
  const std::string command = "exec " + (prefix.empty() ? "" : "env " + prefix + " ") + binary() + " " + arguments +
                              " > " + output.string() + " 2>&1";
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, &attributes, const_cast<char**>(argv), environ), 0);
  posix_spawnattr_destroy(&attributes);
  return pid;
}

inline int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Polls `ready` every 20 ms for up to two minutes; false when `pid` ended first or time ran out.
template <typename Ready>
bool wait_until(Ready ready, pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    if (kill(pid, 0) != 0) return false;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The processes whose parent is `parent` (an audit's workers), from /proc.
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto text = slurp(entry.path() / "stat");
    const auto close = text.rfind(')');
    if (close == std::string::npos || close + 2 >= text.size()) continue;
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) children.push_back(std::stoi(name));
  }
  return children;
}

// Whether `pid` is a live process (a zombie waiting for its parent is not).
inline bool alive(pid_t pid) {
  const auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

inline int count_files(const fs::path& folder, const std::string& prefix) {
  int count = 0;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(folder, error))
    if (file.path().filename().string().rfind(prefix, 0) == 0) ++count;
  return count;
}

// Removes `folder` while a running audit may still make files in it, as a cleaner of temporary files
// would: again until it is gone (one pass fails with "Directory not empty" when a file appears in it
// meanwhile). False when it still exists after ten seconds.
inline bool remove_while_in_use(const fs::path& folder) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::error_code error;
  while (true) {
    fs::remove_all(folder, error);
    if (!fs::exists(folder, error)) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
  }
}

// A folder that lives as long as the test process: for a fixture made once and shared by its tests.
// Removed as the process exits, so a run of thousands of test processes leaves nothing in /tmp.
inline const fs::path& process_folder(const std::string& prefix) {
  struct Folders {
    std::map<std::string, fs::path> paths;
    ~Folders() {
      std::error_code ignored;
      for (const auto& [prefix, path] : paths) fs::remove_all(path, ignored);
    }
  };
  static Folders folders;
  auto [at, made] = folders.paths.try_emplace(prefix);
  if (made) {
    at->second = fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()));
    fs::create_directories(at->second);
  }
  return at->second;
}

// A report made once for every test process of this build that asks for it by `name` (CTest runs each
// test in a process of its own, so a process's static would make it again in each): the first makes it
// under a lock, the others wait and read it. `make(folder, file)` writes the report to `file` (anything
// it needs beside it, in `folder`, which is the report's) and says whether it did. The folder is keyed
// by the binaries' modification time, so a rebuilt binary makes its reports again, and by the variables
// that change what the libraries compute (a run with ATen or oneDNN capped makes its own). Read only: a
// test that changes one copies it first. "" (and a failure) where it could not be made.
template <typename Make>
std::string shared_report_made_by(const std::string& name, Make make) {
  // The front end and the torch side beside it, which runs the audit: either rebuilt, the reports are made again.
  struct stat front_end {
  }, torch_side{};
  ::stat(test_paths::kBinary, &front_end);
  ::stat((fs::path(test_paths::kBinary).parent_path() / "repro-audit-torch").c_str(), &torch_side);
  // The variables the report's fingerprint records as changing numerics (fingerprint/numerics_environment.h).
  std::string settings;
  for (const auto& [name, value] : repro_audit::numerics_environment(repro_audit::environment_variables(environ)))
    settings += name + '=' + value + '\n';
  const auto folder = fs::path(test_paths::kBinary).parent_path() / "tests" / "shared-reports" /
                      (std::to_string(std::max(front_end.st_mtim.tv_sec, torch_side.st_mtim.tv_sec)) + "-" +
                       std::to_string(std::hash<std::string>{}(settings)));
  std::error_code ignored;
  fs::create_directories(folder, ignored);
  const auto report = folder / (name + ".json");
  const int lock = ::open((folder / (name + ".lock")).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  if (!fs::exists(report)) {
    const auto partial = folder / (name + ".partial.json");
    if (make(folder, partial.string())) fs::rename(partial, report, ignored);
  }
  if (lock >= 0) ::close(lock);
  return fs::exists(report) ? report.string() : "";
}

// The report of `repro-audit run ARGUMENTS --json FILE`, made once for every test of this build.
inline std::string shared_report(const std::string& name, const std::string& arguments) {
  return shared_report_made_by(name, [&](const fs::path&, const std::string& file) {
    const auto made = shell(std::string(test_paths::kBinary) + " run " + arguments + " --quiet --json " + file);
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return made.exit_code == 0;
  });
}

// A scratch folder per test.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-cli-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(folder_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(folder_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(folder_ / name) << text;
    return (folder_ / name).string();
  }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }
  fs::path folder_;
};

// The front end and repro-audit-torch copied into `folder`, beside a repro-audit-cpu that writes the command
// it was started for (worker, rank, export-inputs) to `folder`/cpu-starts.log and runs the real one: what
// the copied programs start from repro-audit-cpu, and so load without libtorch's CUDA half. Returns the
// copied front end, or "" where the build made no repro-audit-cpu (a libtorch without a CUDA half).
inline std::string programs_logging_cpu_starts(const fs::path& folder) {
  const fs::path built = fs::path(test_paths::kBinary).parent_path();
  if (!fs::exists(built / "repro-audit-cpu")) return "";
  fs::create_directories(folder);
  for (const auto* program : {"repro-audit", "repro-audit-torch"})
    fs::copy_file(built / program, folder / program, fs::copy_options::overwrite_existing);
  std::ofstream(folder / "repro-audit-cpu") << "#!/bin/sh\necho \"$1\" >> '" << (folder / "cpu-starts.log").string()
                                            << "'\nexec '" << (built / "repro-audit-cpu").string() << "' \"$@\"\n";
  fs::permissions(folder / "repro-audit-cpu", fs::perms::owner_all);
  return (folder / "repro-audit").string();
}

// A quick audit: one variant, one flag set, two processes of two runs.
inline const std::string kSmallAudit = "--device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2";

}  // namespace testing_cli
