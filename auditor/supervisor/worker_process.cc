#include "supervisor/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>

#include "common/user_error.h"
#include "supervisor/worker_folder.h"

extern char** environ;

namespace repro_audit {
namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    if (!overrides.count(text.substr(0, text.find('=')))) result.push_back(text);
  }
  for (const auto& [name, value] : overrides)
    if (!value.empty()) result.push_back(name + "=" + value);
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? fmt::format("SIG{}", abbreviation) : fmt::format("signal {}", signal);
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& environment,
                             const std::optional<std::string>& input, const std::string& temporary_folder)
    : log_fd_(anonymous_file(temporary_folder)) {
  try {
    if (!environment.count("TMPDIR")) folder_ = std::make_unique<WorkerFolder>(temporary_folder);
    start(argv, environment);
  } catch (...) {
    ::close(log_fd_);
    throw;
  }
  if (input) send(*input);
}

void WorkerProcess::start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment) {
  int input_pipe[2], output_pipe[2];
  if (pipe2(input_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    throw EnvironmentError(fmt::format("cannot start {}: no pipe to it: {}", argv[0], std::strerror(error)));
  }
  if (pipe2(output_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    for (const int fd : {input_pipe[0], input_pipe[1]}) ::close(fd);
    throw EnvironmentError(fmt::format("cannot start {}: no pipe to it: {}", argv[0], std::strerror(error)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd_, 2);
  // A process group of its own: the terminal's SIGINT/SIGQUIT go to the supervisor's group only.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // SIGPIPE back to its default in the child: this process ignores it (cli/cli.cc), the child need not.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  auto args = argv;
  auto overrides = environment;
  const auto kept = user_tmpdir().value_or("");
  if (folder_) overrides.insert({{"TMPDIR", folder_->path()}, {"REPRO_AUDIT_TMPDIR", kept}});
  auto env = merged_environment(overrides);
  if (folder_ && kept.empty()) env.push_back("REPRO_AUDIT_TMPDIR=");  // set, and empty: the user gave none
  auto arg_pointers = pointers(args);
  auto env_pointers = pointers(env);
  const int rc = posix_spawn(&pid_, args[0].c_str(), &actions, &attributes, arg_pointers.data(), env_pointers.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(input_pipe[0]);
  ::close(output_pipe[1]);
  if (rc != 0) {
    ::close(input_pipe[1]);
    ::close(output_pipe[0]);
    // /proc/self/exe names a removed binary "PATH (deleted)": the workers are this binary, started anew.
    const std::string deleted = " (deleted)";
    const auto& program = args[0];
    if (program.size() > deleted.size() && program.ends_with(deleted))
      throw EnvironmentError(fmt::format("the program {} was removed while it ran: its workers cannot start: {}",
                                         program.substr(0, program.size() - deleted.size()), std::strerror(rc)));
    throw SpawnError(fmt::format("cannot start {}: {}", program, std::strerror(rc)));
  }
  output_fd_ = output_pipe[0];
  input_fd_ = input_pipe[1];
}

void WorkerProcess::send(const std::string& input) {
  if (input_fd_ < 0) return;
  // The batch is small (a few KiB); a worker that dies before reading it gives EPIPE, ignored here
  // because its death is reported by wait().
  std::size_t written = 0;
  while (written < input.size()) {
    const auto n = ::write(input_fd_, input.data() + written, input.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::close(input_fd_);
  input_fd_ = -1;
}

bool WorkerProcess::stopped() const {
  if (reaped_ || pid_ <= 0) return false;
  // /proc/PID/stat: "PID (COMMAND) STATE ...", the command in parentheses may hold spaces.
  std::ifstream stat(fmt::format("/proc/{}/stat", pid_));
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'T' || text[close + 2] == 't');
}

bool WorkerProcess::has_line(std::chrono::steady_clock::time_point deadline) {
  // A stopped worker says nothing until continued: found out here within a poll, not at the deadline.
  while (buffer_.find('\n') == std::string::npos)
    if (std::chrono::steady_clock::now() >= deadline || !fill(deadline) || stopped()) return false;
  return true;
}

bool WorkerProcess::fill(std::chrono::steady_clock::time_point deadline) {
  // The worker's end is its exit, not the end of its output: a process it started (os.fork, a data
  // loader, Popen(close_fds=False)) may hold the pipe open long after. Once the worker has exited,
  // only what it wrote before is read, and the output has ended when none is left.
  const bool exited = leader_exited();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0 && !exited) return true;
  pollfd descriptor{output_fd_, POLLIN, 0};
  const int wait_ms = exited ? 0 : static_cast<int>(std::min<long long>(left.count(), kExitPollMilliseconds));
  const int ready = ::poll(&descriptor, 1, wait_ms);
  if (ready < 0 && errno != EINTR) return false;
  if (ready < 0) return true;
  if (ready == 0) return !exited;
  char chunk[65536];
  const auto n = ::read(output_fd_, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

bool WorkerProcess::leader_exited() const {
  if (reaped_) return true;
  siginfo_t info{};
  // WNOWAIT: the exited worker stays a zombie, so its id names no other process group until reap().
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
}

void WorkerProcess::reap() {
  if (reaped_) return;
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  // What the worker started ends with it: its group, killed while the unreaped worker still holds the
  // group's id (no other group can have it). A process that left the group on purpose (setsid, a
  // daemon) is out of reach; see the README's "Surviving faults and interruptions".
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  signal_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) terminate(std::chrono::milliseconds(200));
  if (input_fd_ >= 0) ::close(input_fd_);
  if (output_fd_ >= 0) ::close(output_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
}

WorkerProcess::ReadStatus WorkerProcess::read_line(std::string& line, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return ReadStatus::line;
    }
    if (std::chrono::steady_clock::now() >= deadline) return ReadStatus::deadline;
    if (!fill(deadline)) return ReadStatus::end_of_output;
  }
}

// The process leads a group of its own (POSIX_SPAWN_SETPGROUP): the signals go to the whole group, so
// what it started (a wrapper script's `sleep`, a shell's pipeline) ends with it instead of outliving it
// and holding its output open.
void WorkerProcess::terminate(std::chrono::milliseconds grace) {
  if (reaped_) return;
  ::kill(-pid_, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until && !leader_exited())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!leader_exited()) ::kill(-pid_, SIGKILL);
  reap();
}

std::string WorkerProcess::wait() {
  reap();
  return signal_ ? "signal " + signal_name(signal_) : fmt::format("exit {}", exit_code_);
}

std::string WorkerProcess::log_tail(std::size_t max_bytes) const {
  struct stat status {};
  if (::fstat(log_fd_, &status) != 0) return "";
  const auto size = static_cast<std::size_t>(status.st_size);
  const auto start = size > max_bytes ? size - max_bytes : 0;
  std::string log(size - start, '\0');
  const auto n = ::pread(log_fd_, log.data(), log.size(), static_cast<off_t>(start));
  log.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (start > 0) log = "..." + log;
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

}  // namespace repro_audit
