// Runs one batch's cells in workers, one after another (supervisor/batch_runner.h).
#include "supervisor/batch_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <utility>

#include "common/user_error.h"
#include "config/settings.h"
#include "protocol/worker_protocol.h"
#include "supervisor/worker_launcher.h"
#include "verdict/cell_runs.h"

namespace repro_audit {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> workers_started{0};
std::atomic<std::int64_t> startup_nanoseconds{0};
std::atomic<int> fork_server_preloads{0};

ProcessObservation ended_observation(int process, ObservationStatus status, const std::string& message) {
  ProcessObservation observation;
  observation.process = process;
  observation.status = status;
  observation.message = message;
  return observation;
}

class BatchRunner {
 public:
  // `lock` guards `observations` and the callbacks when runners work side by side; `untimed` marks
  // the observations of a worker that ran beside others.
  BatchRunner(const Batch& batch, int process, const SupervisorOptions& options, Observations& observations,
              std::mutex& lock, bool untimed = false)
      : batch_(batch),
        process_(process),
        options_(options),
        observations_(observations),
        lock_(lock),
        untimed_(untimed) {
    for (const auto& cell : batch.cells)
      if (!options.finished.count({cell.key, process})) remaining_.push_back(cell);
  }

  // A later timing round of the batch's cells: each cell's samples go to its first process's
  // observation, already in `observations`.
  BatchRunner(const Batch& batch, int timing_round, const SupervisorOptions& options, Observations& observations,
              std::mutex& lock, std::in_place_t)
      : batch_(batch),
        process_(0),
        options_(options),
        observations_(observations),
        lock_(lock),
        untimed_(false),
        timing_round_(timing_round),
        remaining_(batch.cells) {}

  // Starts workers until every remaining cell has an observation; false when interrupted.
  bool run() {
    while (!remaining_.empty() && !interrupted_) {
      if (options_.stop_requested()) return false;
      if (run_worker() == Ended::not_started && ++start_failures_ < kStartAttempts) continue;
      start_failures_ = 0;
    }
    return !interrupted_;
  }

 private:
  void finish(const Cell& cell, ProcessObservation observation) {
    observation.process = process_;
    observation.untimed = untimed_;
    const std::lock_guard hold(lock_);
    if (timing_round_ > 0) {
      if (auto* first = first_process(observations_, cell.key)) {
        add_timing_round(*first, observation, timing_round_);
        if (options_.on_timing_round) options_.on_timing_round(cell, *first);
      }
    } else {
      if (options_.on_cell) options_.on_cell(cell, observation);
      observations_[cell.key].push_back(std::move(observation));
    }
    remaining_.erase(
        std::find_if(remaining_.begin(), remaining_.end(), [&](const Cell& c) { return c.key == cell.key; }));
  }

  const Cell* find_remaining(const std::string& key) const {
    for (const auto& cell : remaining_)
      if (cell.key == key) return &cell;
    return nullptr;
  }

  enum class Ended { ran, not_started };

  // A worker that never loaded (stopped by a signal, or too slow to start) ran none of the cells: a
  // fresh one takes them, and only after kStartAttempts such workers is a cell given the failure.
  static constexpr int kStartAttempts = 3;
  // A worker that reported every cell has this long (or its start allowance, if shorter) to exit
  // (Python's and libtorch's teardown take a second or two) before it is stopped; its cells are done.
  static constexpr std::chrono::seconds kExitAllowance{10};

  Ended run_worker() {
    auto request = batch_request(batch_, remaining_, process_, options_);
    request.timing_round = timing_round_;
    const auto asked = Clock::now();
    ++workers_started;
    const auto worker = options_.launcher->start(
        request_to_json(request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
        timing_round_ > 0 ? round_environment(batch_, options_) : batch_environment(batch_));
    const Cell* in_flight = nullptr;
    bool loaded = false;  // said anything (its environment first): it started
    int stopped_polls = 0;
    auto deadline = Clock::now() + options_.startup_allowance;
    std::string line;
    while (true) {
      if (options_.stop_requested()) {
        worker->terminate(options_.terminate_grace);
        return Ended::ran;
      }
      const auto status = worker->read_line(line, std::min(deadline, Clock::now() + std::chrono::milliseconds(500)));
      if (status == Worker::ReadStatus::deadline) {
        // Stopped before it ran a cell (seen twice, half a second apart): no use waiting for it.
        stopped_polls = !in_flight && worker->stopped() ? stopped_polls + 1 : 0;
        if (Clock::now() < deadline && stopped_polls < 2) continue;
        worker->terminate(options_.terminate_grace);
        // Every cell reported and the worker not gone in time (its exit held up): nothing to blame.
        if (remaining_.empty()) return Ended::ran;
        const bool never_started = !in_flight && (!loaded || stopped_polls >= 2);
        if (never_started && start_failures_ + 1 < kStartAttempts) return Ended::not_started;
        const auto message = in_flight ? fmt::format("exceeded the time limit of {} s", in_flight->timeout_seconds)
                             : never_started
                                 ? fmt::format("did not run: {} workers in a row {}", kStartAttempts,
                                               stopped_polls >= 2 ? "were stopped by a signal before starting it"
                                                                  : "did not start in time")
                                 : std::string("the worker did not start in time");
        finish(in_flight ? *in_flight : remaining_.front(),
               ended_observation(process_, ObservationStatus::timeout, message));
        return Ended::ran;
      }
      if (status == Worker::ReadStatus::end_of_output) break;
      const auto event = parse_event(line);
      if (!event) continue;  // not a protocol line
      if (!loaded)
        startup_nanoseconds += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - asked).count();
      loaded = true;
      if (event->kind == WorkerEvent::Kind::environment_failure) {
        // The machine failed the worker (its temporary folder gone, a full disk): no cell's verdict.
        worker->terminate(options_.terminate_grace);
        throw EnvironmentError(event->message);
      }
      if (event->kind == WorkerEvent::Kind::imports) {
        options_.launcher->note_imports(batch_environment(batch_), event->modules);
        fork_server_preloads += static_cast<int>(event->preloaded.size());
      } else if (event->kind == WorkerEvent::Kind::environment && options_.on_environment) {
        const std::lock_guard hold(lock_);
        options_.on_environment(event->environment, batch_.process_settings);
      } else if (event->kind == WorkerEvent::Kind::start) {
        in_flight = find_remaining(event->key);
        if (in_flight)
          deadline =
              Clock::now() + std::chrono::milliseconds(static_cast<long long>(in_flight->timeout_seconds * 1000));
      } else if (event->kind == WorkerEvent::Kind::cell) {
        const auto* cell = find_remaining(event->key);
        if (cell)
          finish(*cell,
                 event->message.empty()
                     ? event->observation
                     : ended_observation(process_, ObservationStatus::exception,
                                         "the worker's record of the cell could not be read: " + event->message));
        in_flight = nullptr;
        deadline = Clock::now() + (remaining_.empty()
                                       ? std::min<std::chrono::milliseconds>(kExitAllowance, options_.startup_allowance)
                                       : options_.startup_allowance);
      }
    }
    const auto ending = worker->wait();
    if (remaining_.empty()) return Ended::ran;
    // Ended because a person stopped the audit: whatever it was running is not a verdict.
    if (options_.stop_requested() || is_interruption_signal(worker->signal())) {
      interrupted_ = true;
      return Ended::ran;
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
    return Ended::ran;
  }

  const Batch& batch_;
  int process_;
  const SupervisorOptions& options_;
  Observations& observations_;
  std::mutex& lock_;
  bool untimed_;
  int timing_round_ = 0;
  std::vector<Cell> remaining_;
  bool interrupted_ = false;
  int start_failures_ = 0;  // workers in a row that never started
};

}  // namespace

bool run_batch(const Batch& batch, int process, const SupervisorOptions& options, Observations& observations,
               std::mutex& lock, bool untimed) {
  return BatchRunner(batch, process, options, observations, lock, untimed).run();
}

bool run_timing_round(const Batch& batch, int round, const SupervisorOptions& options, Observations& observations,
                      std::mutex& lock) {
  return BatchRunner(batch, round, options, observations, lock, std::in_place).run();
}

WorkerActivity worker_activity() {
  return {workers_started.load(), startup_nanoseconds.load() / 1e9, fork_server_preloads.load()};
}

WorkerRequest batch_request(const Batch& batch, const std::vector<Cell>& cells, int process,
                            const SupervisorOptions& options) {
  WorkerRequest request{
      .device = options.device,
      .process = process,
      .repeats = options.repeats,
      .warmup = options.warmup,
      .timing = options.timing,
      .timing_round = 0,
      .process_settings = batch.process_settings,
      .cells = cells,
      .input_scheme = options.input_scheme,
      .sensitivity_process = options.measure_sensitivity ? sensitivity_process(options.processes) : -1,
      .sensitivity_elsewhere = {},
      .quiet_runs = quiet_runs_per_process(options.processes)};
  for (const auto& cell : cells)
    if (options.sensitivity_elsewhere.count(cell.key)) request.sensitivity_elsewhere.push_back(cell.key);
  return request;
}

std::map<std::string, std::string> worker_environment(const FlagSet& process_settings) {
  auto environment = setting_environment(process_settings);  // e.g. CUBLAS_WORKSPACE_CONFIG
  // PyTorch's own default since 1.13; a C++ program must ask for it before CUDA loads.
  if (!std::getenv("CUDA_MODULE_LOADING")) environment["CUDA_MODULE_LOADING"] = "LAZY";
  return environment;
}

std::map<std::string, std::string> batch_environment(const Batch& batch) {
  auto environment = worker_environment(batch.process_settings);
  environment[kWorkerPython] = "";
  environment[kWorkerCompileCache] = "";
  environment[kWorkerCompiles] = "";
  for (const auto& cell : batch.cells) {
    if (!cell.model || !is_python_model(*cell.model)) continue;
    environment[kWorkerPython] = cell.model->python;
    environment[kWorkerCompileCache] = cell.model->compile_cache;
    if (compiles(cell.settings)) environment[kWorkerCompiles] = "1";
  }
  return environment;
}

std::map<std::string, std::string> round_environment(const Batch& batch, const SupervisorOptions& options) {
  auto environment = batch_environment(batch);
  const bool py = !environment[kWorkerPython].empty();
  const bool models = std::any_of(batch.cells.begin(), batch.cells.end(),
                                  [](const Cell& cell) { return cell.model && !is_python_model(*cell.model); });
  if (options.device == "cpu" && (py ? environment[kWorkerCompiles].empty() : !models))
    environment[kWorkerForkRound] = "1";
  return environment;
}

bool is_interruption_signal(int signal) { return signal == SIGINT || signal == SIGHUP; }

}  // namespace repro_audit
