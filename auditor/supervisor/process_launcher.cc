#include "supervisor/process_launcher.h"

#include <algorithm>

#include "protocol/worker_protocol.h"

namespace repro_audit {

ProcessLauncher::~ProcessLauncher() = default;  // ends the workers never handed out

std::unique_ptr<Worker> ProcessLauncher::start(const std::string& request,
                                               const std::map<std::string, std::string>& environment) {
  {
    const std::lock_guard hold(lock_);
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
      if (it->environment == environment) {
        auto worker = std::move(it->worker);
        waiting_.erase(it);
        worker->send(request);
        return worker;
      }
  }
  return launch(environment, request);
}

std::unique_ptr<WorkerProcess> ProcessLauncher::launch(const std::map<std::string, std::string>& environment,
                                                       const std::optional<std::string>& request) {
  const auto python = environment.find(kWorkerPython);
  if (python == environment.end() || python->second.empty() || !interpreter_)
    return std::make_unique<WorkerProcess>(std::vector<std::string>{executable_, subcommand_}, environment, request,
                                           temporary_folder_);
  const auto start = interpreter_(python->second);
  auto overrides = environment;
  overrides[kWorkerPython] = "";
  for (const auto& [name, value] : start.environment) overrides[name] = value;
  try {
    return std::make_unique<WorkerProcess>(start.argv, overrides, request, temporary_folder_);
  } catch (const SpawnError& error) {
    // Gone or broken since the audit checked it: the machine's failure, not the cells'. Nothing is
    // journaled for them, and --resume runs them once the interpreter is back. (A temporary folder or a
    // pipe that cannot be made fails as for any worker, unwrapped.)
    throw EnvironmentError(std::string("the py cells' interpreter cannot be started: ") + error.what());
  }
}

void ProcessLauncher::prestart(const std::vector<std::map<std::string, std::string>>& environments,
                               std::chrono::steady_clock::time_point deadline, const std::function<bool()>& give_up) {
  std::vector<WorkerProcess*> started;
  {
    const std::lock_guard hold(lock_);
    // A worker already waiting with the same environment counts for one of them (started ahead for a
    // later timing round that needs it now).
    std::vector<char> counted(waiting_.size(), 0);
    for (const auto& environment : environments) {
      std::size_t same = 0;
      while (same < counted.size() && (counted[same] || waiting_[same].environment != environment)) ++same;
      if (same < counted.size()) {
        counted[same] = 1;
        continue;
      }
      auto worker = launch(environment, std::nullopt);
      started.push_back(worker.get());
      waiting_.push_back({environment, std::move(worker)});
    }
  }
  // A worker that died or is slow is found out when its request is read: here it only stops waiting.
  // Eight workers importing torch on two cores take seconds: a stop or a refusal (give_up) is heard
  // within a poll, and the workers not handed out end with the launcher.
  constexpr std::chrono::milliseconds kGiveUpPoll{100};
  for (auto* worker : started)
    while (true) {
      const auto slice = std::min(deadline, std::chrono::steady_clock::now() + kGiveUpPoll);
      if (worker->has_line(slice)) break;
      const auto now = std::chrono::steady_clock::now();
      if (now < slice || now >= deadline) break;  // it ended or was stopped, or the time is up
      if (give_up && give_up()) return;
    }
}

}  // namespace repro_audit
