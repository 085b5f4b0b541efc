#pragma once
// The real worker launcher: `repro-audit worker` processes (supervisor/worker_process.h), started when
// asked or ahead of their requests, and py cells' interpreters in their place.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/worker_launcher.h"
#include "supervisor/worker_process.h"

namespace repro_audit {

// Starts `executable worker` processes (or another internal subcommand), their stderr kept in
// unlinked files in `temporary_folder`. A worker whose environment names the py cells' interpreter
// (kWorkerPython) is that interpreter, started as `interpreter` says.
class ProcessLauncher : public WorkerLauncher {
 public:
  ProcessLauncher(std::string executable, std::string temporary_folder, std::string subcommand = "worker",
                  InterpreterLaunch interpreter = {})
      : executable_(std::move(executable)),
        temporary_folder_(std::move(temporary_folder)),
        subcommand_(std::move(subcommand)),
        interpreter_(std::move(interpreter)) {}
  ~ProcessLauncher() override;
  std::unique_ptr<Worker> start(const std::string& request,
                                const std::map<std::string, std::string>& environment) override;
  void prestart(const std::vector<std::map<std::string, std::string>>& environments,
                std::chrono::steady_clock::time_point deadline, const std::function<bool()>& give_up) override;

 private:
  std::unique_ptr<WorkerProcess> launch(const std::map<std::string, std::string>& environment,
                                        const std::optional<std::string>& request);
  struct Waiting {  // a worker started ahead, with its environment
    std::map<std::string, std::string> environment;
    std::unique_ptr<WorkerProcess> worker;
  };
  std::vector<Waiting> waiting_;
  std::mutex lock_;  // start() is called from several threads (--jobs)
  std::string executable_;
  std::string temporary_folder_;
  std::string subcommand_;
  InterpreterLaunch interpreter_;
};

}  // namespace repro_audit
