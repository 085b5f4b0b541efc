#pragma once
// How the supervisor starts and talks to workers, behind an interface: the real one spawns
// `repro-audit worker` processes (ProcessLauncher, supervisor/process_launcher.h); tests script fake workers to check
// crash blame, time limits, interruptions and resume in milliseconds.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace repro_audit {

// A running worker as the supervisor sees it.
class Worker {
 public:
  virtual ~Worker() = default;
  enum class ReadStatus { line, end_of_output, deadline };
  // Waits until a whole line arrives, the worker closes its output, or the deadline passes.
  virtual ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline) = 0;
  // TERM, then KILL after `grace`; reaps the worker.
  virtual void terminate(std::chrono::milliseconds grace) = 0;
  // Reaps the worker; how it ended: "exit 0", "signal SIGSEGV".
  virtual std::string wait() = 0;
  virtual int signal() const = 0;  // the signal that ended it; 0 when it exited
  virtual std::string log_tail(std::size_t max_bytes) const = 0;
  // Stopped by a signal (SIGSTOP, SIGTSTP): it cannot run until continued.
  virtual bool stopped() const { return false; }
};

// How a worker of py cells starts: the cells' interpreter itself, running the py runner
// (python_runner/python_worker.h makes it), instead of `executable worker`, which would load libtorch
// only to hand over to the interpreter.
struct InterpreterStart {
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;  // entries added to the worker's
};
using InterpreterLaunch = std::function<InterpreterStart(const std::string& python)>;

class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  // `request` is the batch (one JSON line) the worker reads on stdin; `environment` entries
  // override the supervisor's, an empty value removes the variable.
  virtual std::unique_ptr<Worker> start(const std::string& request,
                                        const std::map<std::string, std::string>& environment) = 0;
  // Starts a worker per entry ahead of its request, so their loading overlaps, and waits until each
  // has loaded (said its first line) or `deadline` passes; start() with the same environment then
  // hands one of them its request. Nothing runs meanwhile that they could slow. `give_up`, when set, is
  // polled while it waits (a stop, or a refusal it throws): true stops the waiting. Default: nothing.
  virtual void prestart(const std::vector<std::map<std::string, std::string>>& environments,
                        std::chrono::steady_clock::time_point deadline, const std::function<bool()>& give_up) {
    (void)environments;
    (void)deadline;
    (void)give_up;
  }
  // A worker of `environment` said its cells imported `modules` (a py worker's imports event): what a
  // fork server of that environment may import before it forks a later round's process. Default: nothing.
  virtual void note_imports(const std::map<std::string, std::string>& environment,
                            const std::vector<std::string>& modules) {
    (void)environment;
    (void)modules;
  }
};

}  // namespace repro_audit
