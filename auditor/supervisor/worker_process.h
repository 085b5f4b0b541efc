#pragma once
// One `repro-audit worker` child: its batch goes in on stdin, JSON lines come back on stdout,
// its stderr goes to a log file kept for crash reports.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

class WorkerProcess {
 public:
  // `environment` entries override the parent's; an empty value removes the variable.
  WorkerProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                const std::string& input, const std::string& log_path);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  enum class ReadStatus { line, end_of_output, deadline };
  // Waits until a whole line arrives, the child closes its output, or the deadline passes.
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline);

  // TERM, then KILL after `grace`; reaps the child.
  void terminate(std::chrono::milliseconds grace);
  // Reaps the child; a description of how it ended: "exit 0", "signal SIGSEGV".
  std::string wait();
  bool killed_by_signal() const { return signal_ != 0; }
  std::string log_tail(std::size_t max_bytes) const;

 private:
  pid_t pid_ = -1;
  int output_fd_ = -1;
  std::string buffer_;
  std::string log_path_;
  bool reaped_ = false;
  int signal_ = 0;
  int exit_code_ = 0;
};

std::string signal_name(int signal);

}  // namespace repro_audit
