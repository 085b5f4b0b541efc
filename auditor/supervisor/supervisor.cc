#include "supervisor/supervisor.h"

#include <fmt/format.h>

#include <csignal>

#include "config/settings.h"
#include "protocol/worker_protocol.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {
namespace {

using Clock = std::chrono::steady_clock;

ProcessObservation ended_observation(int process, ObservationStatus status, const std::string& message) {
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
    const auto worker =
        options_.launcher->start(request_to_json(batch_request(batch_, remaining_, process_, options_)).dump() + "\n",
                                 worker_environment(batch_.process_settings));
    const Cell* in_flight = nullptr;
    auto deadline = Clock::now() + options_.startup_allowance;
    std::string line;
    while (true) {
      if (options_.stop_requested()) {
        worker->terminate(options_.terminate_grace);
        return;
      }
      const auto status = worker->read_line(line, std::min(deadline, Clock::now() + std::chrono::milliseconds(500)));
      if (status == Worker::ReadStatus::deadline) {
        if (Clock::now() < deadline) continue;
        worker->terminate(options_.terminate_grace);
        const auto message = in_flight ? fmt::format("exceeded the time limit of {} s", in_flight->timeout_seconds)
                                       : std::string("the worker did not start in time");
        finish(in_flight ? *in_flight : remaining_.front(),
               ended_observation(process_, ObservationStatus::timeout, message));
        return;
      }
      if (status == Worker::ReadStatus::end_of_output) break;
      const auto event = parse_event(line);
      if (!event) continue;  // not a protocol line
      if (event->kind == WorkerEvent::Kind::environment && options_.on_environment) {
        options_.on_environment(event->environment, batch_.process_settings);
      } else if (event->kind == WorkerEvent::Kind::start) {
        in_flight = find_remaining(event->key);
        if (in_flight)
          deadline =
              Clock::now() + std::chrono::milliseconds(static_cast<long long>(in_flight->timeout_seconds * 1000));
      } else if (event->kind == WorkerEvent::Kind::cell) {
        const auto* cell = find_remaining(event->key);
        if (cell) finish(*cell, event->observation);
        in_flight = nullptr;
        deadline = Clock::now() + options_.startup_allowance;
      }
    }
    const auto ending = worker->wait();
    if (remaining_.empty()) return;
    // Ended because a person stopped the audit: whatever it was running is not a verdict.
    if (options_.stop_requested() || is_interruption_signal(worker->signal())) {
      interrupted_ = true;
      return;
    }
    // The worker died: blame the cell it was running, or the first one when it died before starting any.
    const auto tail = worker->log_tail(600);
    const auto message =
        tail.empty() ? "worker ended: " + ending : fmt::format("worker ended: {}; stderr: {}", ending, tail);
    const Cell& victim = in_flight ? *in_flight : remaining_.front();
    finish(victim,
           ended_observation(
               process_, worker->signal() != 0 || in_flight ? ObservationStatus::crashed : ObservationStatus::exception,
               message));
  }

  const Batch& batch_;
  int process_;
  const SupervisorOptions& options_;
  Observations& observations_;
  std::vector<Cell> remaining_;
  bool interrupted_ = false;
};

}  // namespace

WorkerRequest batch_request(const Batch& batch, const std::vector<Cell>& cells, int process,
                            const SupervisorOptions& options) {
  return {options.device, process, options.repeats, options.warmup, options.timing, batch.process_settings, cells};
}

std::map<std::string, std::string> worker_environment(const FlagSet& process_settings) {
  auto environment = setting_environment(process_settings);  // e.g. CUBLAS_WORKSPACE_CONFIG
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
