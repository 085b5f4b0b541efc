#include "supervisor/supervisor.h"

#include <fmt/format.h>

#include <csignal>

#include "config/settings.h"
#include "report/json_io.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

using Clock = std::chrono::steady_clock;
// A worker loads libtorch (and on a GPU machine creates a context) before its first cell.
constexpr auto kStartupAllowance = std::chrono::seconds(60);
constexpr auto kTerminateGrace = std::chrono::seconds(3);

ProcessObservation ended_observation(int process, const std::string& status, const std::string& message) {
  ProcessObservation observation;
  observation.process = process;
  observation.status = status;
  observation.message = message;
  return observation;
}

class BatchRunner {
 public:
  BatchRunner(const Batch& batch, int process, const SupervisorOptions& options, Observations& observations)
      : batch_(batch), process_(process), options_(options), observations_(observations) {
    for (const auto& cell : batch.cells)
      if (!options.finished.count({cell.key, process})) remaining_.push_back(cell);
  }

  // Starts workers until every remaining cell has an observation; false when interrupted.
  bool run() {
    while (!remaining_.empty() && !interrupted_) {
      if (options_.stop_requested()) return false;
      run_worker();
    }
    return !interrupted_;
  }

 private:
  void finish(const Cell& cell, ProcessObservation observation) {
    observation.process = process_;
    if (options_.on_cell) options_.on_cell(cell, observation);
    observations_[cell.key].push_back(std::move(observation));
    remaining_.erase(
        std::find_if(remaining_.begin(), remaining_.end(), [&](const Cell& c) { return c.key == cell.key; }));
  }

  const Cell* find_remaining(const std::string& key) const {
    for (const auto& cell : remaining_)
      if (cell.key == key) return &cell;
    return nullptr;
  }

  void run_worker() {
    WorkerProcess worker({options_.executable, "worker"}, worker_environment(batch_.process_settings),
                         batch_request(batch_, remaining_, process_, options_).dump() + "\n",
                         options_.temporary_folder);
    const Cell* in_flight = nullptr;
    auto deadline = Clock::now() + kStartupAllowance;
    std::string line;
    while (true) {
      if (options_.stop_requested()) {
        worker.terminate(kTerminateGrace);
        return;
      }
      const auto status = worker.read_line(line, std::min(deadline, Clock::now() + std::chrono::milliseconds(500)));
      if (status == WorkerProcess::ReadStatus::deadline) {
        if (Clock::now() < deadline) continue;
        worker.terminate(kTerminateGrace);
        const auto message = in_flight ? fmt::format("exceeded the time limit of {} s", in_flight->timeout_seconds)
                                       : std::string("the worker did not start in time");
        finish(in_flight ? *in_flight : remaining_.front(), ended_observation(process_, "timeout", message));
        return;
      }
      if (status == WorkerProcess::ReadStatus::end_of_output) break;
      nlohmann::json event;
      try {
        event = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        continue;  // not a protocol line
      }
      const auto kind = event.value("event", "");
      if (kind == "environment" && options_.on_environment) {
        options_.on_environment(event.at("environment"));
      } else if (kind == "start") {
        in_flight = find_remaining(event.value("key", ""));
        if (in_flight)
          deadline =
              Clock::now() + std::chrono::milliseconds(static_cast<long long>(in_flight->timeout_seconds * 1000));
      } else if (kind == "cell") {
        const auto* cell = find_remaining(event.value("key", ""));
        if (cell) finish(*cell, event.at("observation").get<ProcessObservation>());
        in_flight = nullptr;
        deadline = Clock::now() + kStartupAllowance;
      }
    }
    const auto ending = worker.wait();
    if (remaining_.empty()) return;
    // Ended because a person stopped the audit: whatever it was running is not a verdict.
    if (options_.stop_requested() || is_interruption_signal(worker.signal())) {
      interrupted_ = true;
      return;
    }
    // The worker died: blame the cell it was running, or the first one when it died before starting any.
    const auto tail = worker.log_tail(600);
    const auto message =
        tail.empty() ? "worker ended: " + ending : fmt::format("worker ended: {}; stderr: {}", ending, tail);
    const Cell& victim = in_flight ? *in_flight : remaining_.front();
    finish(victim,
           ended_observation(process_, worker.killed_by_signal() || in_flight ? "crashed" : "exception", message));
  }

  const Batch& batch_;
  int process_;
  const SupervisorOptions& options_;
  Observations& observations_;
  std::vector<Cell> remaining_;
  bool interrupted_ = false;
};

}  // namespace

nlohmann::json batch_request(const Batch& batch, const std::vector<Cell>& cells, int process,
                             const SupervisorOptions& options) {
  return {{"device", options.device},
          {"process", process},
          {"repeats", options.repeats},
          {"warmup", options.warmup},
          {"process_settings", batch.process_settings},
          {"cells", cells}};
}

std::map<std::string, std::string> worker_environment(const FlagSet& process_settings) {
  std::map<std::string, std::string> environment;
  auto it = process_settings.find("cublas_workspace_config");
  const bool set = it != process_settings.end() && it->second != "unset" && it->second != kNotApplicable;
  environment["CUBLAS_WORKSPACE_CONFIG"] = set ? it->second : "";
  // PyTorch's own default since 1.13; a C++ program must ask for it before CUDA loads.
  if (!std::getenv("CUDA_MODULE_LOADING")) environment["CUDA_MODULE_LOADING"] = "LAZY";
  return environment;
}

bool is_interruption_signal(int signal) { return signal == SIGINT || signal == SIGHUP; }

SupervisedRuns run_batches(const std::vector<Batch>& batches, const SupervisorOptions& options) {
  SupervisedRuns result;
  // Batch by batch, so an interrupted audit has whole cells (every process) to report.
  for (const auto& batch : batches)
    for (int process = 0; process < options.processes; ++process)
      if (!BatchRunner(batch, process, options, result.observations).run()) {
        result.interrupted = true;
        return result;
      }
  return result;
}

}  // namespace repro_audit
