#pragma once
// The real worker launcher: `repro-audit worker` processes (supervisor/worker_process.h), started when
// asked or ahead of their requests, and py cells' interpreters in their place.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "supervisor/worker_launcher.h"
#include "supervisor/worker_process.h"

namespace repro_audit {

// Starts `executable worker` processes (or another internal subcommand), their stderr kept in
// unlinked files in `temporary_folder`. A worker whose environment names the py cells' interpreter
// (kWorkerPython) is that interpreter, started as `interpreter` says.
//
// A later timing round's worker whose environment holds kWorkerForkRound (on the CPU: supervisor.h,
// round_environment) asks a fork server of the same environment for a process forked from it: one per
// environment, started ahead with the others, that has loaded libtorch (`executable worker`, whose
// round's worker is the front end beside it: `repro-audit fork-client`, protocol/fork_rounds.h) or, for py
// cells, is that interpreter and has imported torch (and what the first round's cells imported of what
// it may import ahead: note_imports), and only forks. The forked process takes the worker's stdin, event
// pipe, log, environment and process group, and the worker ends as it ends (python_runner.py, run_forked
// and serve_forks): to the supervisor it is a worker like any other, loaded in a fraction of a second. A
// server that cannot start or listen, or C++ cells' where no front end sits beside `executable`: the
// round's workers load torch themselves, as before. A first
// round's worker started after its batch's server learns where that server will listen
// (kWorkerForkServer), so that the server imports what the worker's cells import while they do.
class ProcessLauncher : public WorkerLauncher {
 public:
  ProcessLauncher(std::string executable, std::string temporary_folder, std::string subcommand = "worker",
                  InterpreterLaunch interpreter = {})
      : executable_(std::move(executable)),
        temporary_folder_(std::move(temporary_folder)),
        subcommand_(std::move(subcommand)),
        interpreter_(std::move(interpreter)) {}
  ~ProcessLauncher() override;
  // The first `executable worker` this launcher starts is `program` instead (a py cell's interpreter
  // does not count): the whole repro-audit-torch, whose fingerprint has the CUDA facts (audit/audit.h).
  void first_worker_runs(std::string program) { first_program_ = std::move(program); }
  std::unique_ptr<Worker> start(const std::string& request,
                                const std::map<std::string, std::string>& environment) override;
  void prestart(const std::vector<std::map<std::string, std::string>>& environments,
                std::chrono::steady_clock::time_point deadline, const std::function<bool()>& give_up) override;
  void note_imports(const std::map<std::string, std::string>& environment,
                    const std::vector<std::string>& modules) override;

 private:
  using Environment = std::map<std::string, std::string>;
  struct ForkServer {
    std::unique_ptr<WorkerProcess> process;
    std::string socket;  // where it listens, once its first line said; "" when it cannot serve
    bool answered = false;
  };
  // The front end beside the workers' program: a C++ round's worker (`repro-audit fork-client`).
  std::string front_end() const;
  // Whether a round's worker of `environment` (without kWorkerForkRound) asks a fork server: a py
  // interpreter always; C++ cells' where the front end sits beside the workers' program.
  bool asks_fork_server(const Environment& environment) const;
  // The fork server of `environment` (without kWorkerForkRound), started if it was not; servers_lock_ held.
  ForkServer& fork_server(const Environment& environment);
  // Its socket, waiting until `deadline` for its first line; "" when it cannot serve. servers_lock_ held.
  static std::string server_socket(ForkServer& server, std::chrono::steady_clock::time_point deadline);
  std::map<Environment, ForkServer> servers_;
  std::map<Environment, std::set<std::string>> imports_;
  std::mutex servers_lock_;
  // Where each server started so far will listen, for the first round's workers of its environment: apart
  // from servers_, whose lock a round's start holds while it waits up to a minute for its server to load.
  std::map<Environment, std::string> server_sockets_;
  std::mutex sockets_lock_;  // taken alone, or last (fork_server holds servers_lock_, prestart lock_)
  std::unique_ptr<WorkerProcess> launch(const std::map<std::string, std::string>& environment,
                                        const std::optional<std::string>& request);
  struct Waiting {  // a worker started ahead, with its environment
    std::map<std::string, std::string> environment;
    std::unique_ptr<WorkerProcess> worker;
  };
  std::vector<Waiting> waiting_;
  std::mutex lock_;  // start() is called from several threads (--jobs)
  std::string executable_;
  std::string first_program_;  // "" once used, or when none was given
  std::mutex first_program_lock_;
  std::string temporary_folder_;
  std::string subcommand_;
  InterpreterLaunch interpreter_;
};

}  // namespace repro_audit
