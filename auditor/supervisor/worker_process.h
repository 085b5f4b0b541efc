#pragma once
// One `repro-audit worker` child: its batch goes in on stdin, JSON lines come back on stdout,
// its stderr goes to an unlinked file in the temporary folder, read back for crash reports: nothing
// is left behind, even when the supervisor is killed. The child runs in a process group of its own,
// so a Ctrl-C on the terminal reaches only the supervisor, which then ends its workers.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/worker_launcher.h"

namespace repro_audit {

class WorkerProcess : public Worker {
 public:
  // `environment` entries override the parent's; an empty value removes the variable. The log file
  // is created (and at once unlinked) in `temporary_folder`.
  WorkerProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                const std::string& input, const std::string& temporary_folder);
  ~WorkerProcess() override;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline) override;
  void terminate(std::chrono::milliseconds grace) override;
  std::string wait() override;
  int signal() const override { return signal_; }
  std::string log_tail(std::size_t max_bytes) const override;

 private:
  pid_t pid_ = -1;
  int output_fd_ = -1;
  std::string buffer_;
  int log_fd_ = -1;
  bool reaped_ = false;
  int signal_ = 0;
  int exit_code_ = 0;
};

std::string signal_name(int signal);

// Creates and unlinks a file in `folder`; returns its descriptor. Throws UserError naming the folder.
int anonymous_file(const std::string& folder);

}  // namespace repro_audit
