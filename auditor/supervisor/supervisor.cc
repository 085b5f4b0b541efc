#include "supervisor/supervisor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "kind/cell_kind.h"
#include "supervisor/batch_runner.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {

int cell_threads(const Cell& cell, int cores) {
  const auto it = cell.settings.find("threads");
  if (it == cell.settings.end()) return std::max(1, cores);
  try {
    return std::max(1, std::stoi(it->second));  // 0 is no thread pool: one thread
  } catch (const std::exception&) {
    return std::max(1, cores);
  }
}

std::vector<ParallelGroup> parallel_groups(const std::vector<Batch>& batches, int processes, int jobs, int cores) {
  std::vector<ParallelGroup> groups;
  for (const auto& batch : batches) {
    std::map<int, std::vector<Cell>> by_threads;
    for (const auto& cell : batch.cells) by_threads[cell_threads(cell, cores)].push_back(cell);
    for (int process = 1; process < processes; ++process)
      for (const auto& [threads, cells] : by_threads) {
        const int workers =
            std::clamp(jobs > 0 ? jobs : std::max(1, cores / threads), 1, static_cast<int>(cells.size()));
        ParallelGroup group{process, std::vector<Batch>(workers, Batch{batch.process_settings, {}})};
        // A variant's cells stay together (a worker draws its inputs once for them), each run of them
        // to the part with the fewest cells so far.
        for (std::size_t i = 0; i < cells.size();) {
          std::size_t end = i + 1;
          while (end < cells.size() && cells[end].probe == cells[i].probe && cells[end].variant == cells[i].variant)
            ++end;
          auto& part = *std::min_element(group.parts.begin(), group.parts.end(), [](const Batch& a, const Batch& b) {
            return a.cells.size() < b.cells.size();
          });
          part.cells.insert(part.cells.end(), cells.begin() + static_cast<long>(i),
                            cells.begin() + static_cast<long>(end));
          i = end;
        }
        groups.push_back(std::move(group));
      }
  }
  return groups;
}

namespace {

using Clock = std::chrono::steady_clock;

// Whether a batch still has a cell for this process.
bool has_work(const Batch& batch, int process, const SupervisorOptions& options) {
  return std::any_of(batch.cells.begin(), batch.cells.end(), [&](const Cell& cell) {
    return !options.finished.count({cell.key, process});
  });
}

// Libtorch takes a worker ~0.5 s to load, and a py worker's `import torch` a second or more: the
// workers the audit will need are started together, up to a few, and have loaded before the first cell
// runs (nothing is timed while they load). Those of the later timing rounds too, where room is left: a
// round takes the cells whose first round was short enough (timing_round_batches), which is only known
// then, so a worker started for a round that takes none is ended unused.
constexpr std::size_t kWorkersAhead = 8;

// While workers load: a refusal throws, a stop ends the waiting.
std::function<bool()> give_up_loading(const SupervisorOptions& options) {
  return [&options] {
    if (options.throw_if_refused) options.throw_if_refused();
    return options.stop_requested();
  };
}

void start_ahead(const std::vector<std::pair<const Batch*, int>>& units, const std::vector<Batch>& batches,
                 const SupervisorOptions& options) {
  std::vector<std::map<std::string, std::string>> environments;
  for (const auto& [batch, process] : units)
    if (environments.size() < kWorkersAhead && has_work(*batch, process, options))
      environments.push_back(batch_environment(*batch));
  for (int round = 2; round <= options.timing.rounds; ++round)
    for (const auto& batch : batches)
      if (environments.size() < kWorkersAhead &&
          std::any_of(batch.cells.begin(), batch.cells.end(),
                      [](const Cell& cell) { return kind_of(cell).has_timing_runs(); }))
        environments.push_back(round_environment(batch, options));
  if (!environments.empty())
    options.launcher->prestart(environments, Clock::now() + options.startup_allowance, give_up_loading(options));
}

}  // namespace

SupervisedRuns run_batches(const std::vector<Batch>& batches, const SupervisorOptions& options) {
  SupervisedRuns result;
  std::mutex lock;
  const auto groups = options.jobs == 1 || options.processes < 2
                          ? std::vector<ParallelGroup>{}
                          : parallel_groups(batches, options.processes, options.jobs, options.cores);
  std::vector<std::pair<const Batch*, int>> units;
  for (const auto& batch : batches)
    for (int process = 0; process < (groups.empty() ? options.processes : 1); ++process)
      units.emplace_back(&batch, process);
  for (const auto& group : groups)
    for (const auto& part : group.parts) units.emplace_back(&part, group.process);
  start_ahead(units, batches, options);
  if (options.jobs == 1 || options.processes < 2) {
    // Batch by batch, so an interrupted audit has whole cells (every process) to report.
    for (const auto& batch : batches)
      for (int process = 0; process < options.processes; ++process)
        if (!run_batch(batch, process, options, result.observations, lock)) {
          result.interrupted = true;
          return result;
        }
    return result;
  }
  // The first process of every batch alone, timed; then the other processes' digests, side by side
  // where the cores allow. An interruption leaves whole cells only for what finished both phases; the
  // journal keeps the rest for --resume.
  for (const auto& batch : batches)
    if (!run_batch(batch, 0, options, result.observations, lock)) {
      result.interrupted = true;
      return result;
    }
  for (const auto& group : groups) {
    if (group.parts.size() == 1) {  // alone: its runs are timings like the first process's
      if (!run_batch(group.parts.front(), group.process, options, result.observations, lock)) {
        result.interrupted = true;
        return result;
      }
      continue;
    }
    std::vector<char> finished(group.parts.size(), 0);
    // A failure of the machine in one part (EnvironmentError, a journal that cannot be written) stops
    // the others and is thrown here, once they all ended.
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    auto side_by_side = options;
    side_by_side.stop_requested = [&] { return failed.load() || options.stop_requested(); };
    {
      std::vector<std::jthread> threads;
      for (std::size_t i = 0; i < group.parts.size(); ++i)
        threads.emplace_back([&, i] {
          try {
            finished[i] = run_batch(group.parts[i], group.process, side_by_side, result.observations, lock, true);
          } catch (...) {
            const std::lock_guard hold(lock);
            if (!failure) failure = std::current_exception();
            failed = true;
          }
        });
    }
    if (failure) std::rethrow_exception(failure);
    if (std::find(finished.begin(), finished.end(), 0) != finished.end()) {
      result.interrupted = true;
      return result;
    }
  }
  return result;
}

bool run_timing_rounds(const std::vector<Batch>& batches, const SupervisorOptions& options,
                       Observations& observations) {
  std::mutex lock;
  for (int round = 2; round <= options.timing.rounds; ++round) {
    const auto round_batches = timing_round_batches(batches, observations, options.timing, round);
    std::vector<std::map<std::string, std::string>> environments;
    for (const auto& batch : round_batches)
      if (environments.size() < kWorkersAhead) environments.push_back(round_environment(batch, options));
    if (!environments.empty())
      options.launcher->prestart(environments, Clock::now() + options.startup_allowance, give_up_loading(options));
    for (const auto& batch : round_batches) {
      if (options.on_round) options.on_round(round, batch);
      if (!run_timing_round(batch, round, options, observations, lock)) return false;
    }
  }
  return true;
}

}  // namespace repro_audit
