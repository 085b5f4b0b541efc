#pragma once
// One `repro-audit worker` child: its batch goes in on stdin, JSON lines come back on stdout,
// its stderr goes to an unlinked file in the temporary folder, read back for crash reports: nothing
// of it is left behind, even when the supervisor is killed. Its TMPDIR is a folder of its own in the
// temporary folder (supervisor/worker_folder.h). The child runs in a process group of its own,
// so a Ctrl-C on the terminal reaches only the supervisor, which then ends its workers, and when it
// ends, however it ends, its group is killed: what it started does not outlive it.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/user_error.h"
#include "supervisor/worker_folder.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {

// The program itself could not be started (posix_spawn failed: missing, not executable, not a program).
class SpawnError : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

class WorkerProcess : public Worker {
 public:
  // `environment` entries override the parent's; an empty value removes the variable. The log file
  // is created (and at once unlinked) in `temporary_folder`, and the child's own folder (its TMPDIR,
  // unless `environment` names one) is made there.
  // Without `input` the child starts and waits for it: send() gives it later (a worker started ahead).
  WorkerProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                const std::optional<std::string>& input, const std::string& temporary_folder);
  ~WorkerProcess() override;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline) override;
  void terminate(std::chrono::milliseconds grace) override;
  std::string wait() override;
  int signal() const override { return signal_; }
  std::string log_tail(std::size_t max_bytes) const override;
  bool stopped() const override;

  // Writes the input and closes the child's stdin; once only.
  void send(const std::string& input);
  // Waits until a whole line has arrived (not taking it), the output ended, or the deadline passed;
  // true for a line.
  bool has_line(std::chrono::steady_clock::time_point deadline);
  // The child's own folder (its TMPDIR); "" where `environment` named another.
  std::string own_folder() const { return folder_ ? folder_->path() : ""; }

 private:
  // Reads what is there into the buffer, waiting up to `deadline`; false at the end of the output or,
  // once the worker has exited, when nothing it wrote is left to read.
  bool fill(std::chrono::steady_clock::time_point deadline);
  bool leader_exited() const;
  // Waits for the worker's exit, kills what is left of its process group, and collects its status.
  void reap();
  // How often a silent pipe is checked for its worker's exit.
  static constexpr int kExitPollMilliseconds = 250;
  void start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment);
  std::unique_ptr<WorkerFolder> folder_;  // the child's TMPDIR (supervisor/worker_folder.h)
  pid_t pid_ = -1;
  int input_fd_ = -1;
  int output_fd_ = -1;
  std::string buffer_;
  int log_fd_ = -1;
  bool reaped_ = false;
  int signal_ = 0;
  int exit_code_ = 0;
};

std::string signal_name(int signal);

}  // namespace repro_audit
