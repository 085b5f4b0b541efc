#pragma once
// Runs batches of cells in worker processes: one worker per batch and cross-process repeat,
// time limits per cell, a fresh worker after a crash, every finished cell handed on at once.
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "protocol/worker_protocol.h"
#include "supervisor/worker_launcher.h"
#include "verdict/observation.h"

namespace repro_audit {

struct SupervisorOptions {
  WorkerLauncher* launcher = nullptr;  // starts the workers; required
  std::string device;
  int repeats = 10;
  int warmup = 1;
  int processes = 2;
  TimingRule timing;  // when each cell's timing-only runs stop
  InputScheme input_scheme = kCurrentInputScheme;
  // How many workers may run side by side for the processes after the first, whose runs only add
  // digests; 0: the cores divided by the cells' threads. The first process always runs alone: its
  // runs are the cell's timings. 1: every worker alone, batch by batch.
  int jobs = 1;
  int cores = 1;                    // what `jobs` 0 divides
  bool measure_sensitivity = true;  // false: no process makes the sensitivity checks
  // A worker loads libtorch (and on a GPU machine creates a context) before its first cell.
  std::chrono::milliseconds startup_allowance = std::chrono::seconds(60);
  std::chrono::milliseconds terminate_grace = std::chrono::seconds(3);  // between TERM and KILL
  // Cells whose sensitivity check another batch makes (audit/shared_sensitivity.h).
  std::set<std::string> sensitivity_elsewhere;
  // (cell key, process index) pairs already finished, e.g. from a journal: not run again.
  std::set<std::pair<std::string, int>> finished;
  std::function<void(const Cell&, const ProcessObservation&)> on_cell;
  // A later timing round starts on a batch of cells; a cell's first process gained that round's
  // samples (the observation as it is now, to be kept in place of the one on_cell saw).
  std::function<void(int round, const Batch&)> on_round;
  std::function<void(const Cell&, const ProcessObservation&)> on_timing_round;
  // A worker's fingerprint, with the process settings it was started with (they may change what the
  // fingerprint sees, e.g. ATEN_CPU_CAPABILITY).
  std::function<void(const nlohmann::json&, const FlagSet& process_settings)> on_environment;
  std::function<bool()> stop_requested = [] { return false; };
  // Polled while the workers started ahead load: throws to end the run at once (a py cell's interpreter
  // check that has refused the audit meanwhile). Empty: nothing to poll.
  std::function<void()> throw_if_refused;
};

using Observations = std::map<std::string, std::vector<ProcessObservation>>;

// The process that makes a batch's sensitivity checks: the second when there is one. Its check is no
// run and is never timed; under --no-cost (and --jobs) the later processes' workers run side by side,
// so the checks are shared among them instead of waiting on the first process alone.
inline int sensitivity_process(int processes) { return processes > 1 ? 1 : 0; }

// What a worker is asked to run.
WorkerRequest batch_request(const Batch& batch, const std::vector<Cell>& cells, int process,
                            const SupervisorOptions& options);

// The worker's environment for a batch: CUBLAS_WORKSPACE_CONFIG set or removed.
std::map<std::string, std::string> worker_environment(const FlagSet& process_settings);
// The same, and the interpreter and compile cache of the batch's py cells (kWorkerPython,
// kWorkerCompileCache), removed when it has none.
std::map<std::string, std::string> batch_environment(const Batch& batch);
// The environment of a later timing round's worker: the batch's, and kWorkerForkRound on the CPU for py
// cells that do not compile and for batches without a TorchScript or AOTInductor model, whose round a
// process forked from a fork server may run: a fresh interpreter would import torch again (seconds), a
// fresh worker load libtorch again (0.3-0.4 s of CPU), for a round's few samples, which a fork shares (its
// timing is its own process's, started after the determinism runs like a fresh worker's; what a fresh
// process would differ in, its hash seed and memory layout, a timing round does not judge). Compiling
// cells, models and CUDA keep fresh processes: a fork shares the server's Inductor state, a model's
// loaded library and CUDA do not survive one.
std::map<std::string, std::string> round_environment(const Batch& batch, const SupervisorOptions& options);

struct SupervisedRuns {
  Observations observations;
  // A stop was requested, or a worker was ended by SIGINT/SIGHUP from outside: the cell it was
  // running got no observation (an interrupted cell is never a verdict) and no further cell started.
  bool interrupted = false;
};

SupervisedRuns run_batches(const std::vector<Batch>& batches, const SupervisorOptions& options);

// What this process's workers cost so far: how many were started, and the time from asking each for
// its cells to its first word (loading libtorch, or finishing a load begun ahead). For the audit log
// (audit/audit.h), which tells a test's time spent starting workers from its time running ops.
struct WorkerActivity {
  int workers = 0;
  double startup_seconds = 0;
  // Modules a fork server imported at a first round's worker's word, while that worker imported them.
  int fork_server_preloads = 0;
};
WorkerActivity worker_activity();

// A cell's first process's observation (const or not, as `observations` is); null when there is none.
template <typename ObservationMap>
auto first_process(ObservationMap& observations, const std::string& key)
    -> decltype(&observations.begin()->second.front()) {
  const auto it = observations.find(key);
  if (it == observations.end()) return nullptr;
  for (auto& observation : it->second)
    if (observation.process == 0) return &observation;
  return nullptr;
}

// The later timing rounds (timing/timing.h), after every batch's determinism runs: for each round from
// 2 to `options.timing.rounds`, a fresh worker per batch times the cells `timing_round_batches` picks,
// and each cell's samples are added to its first process's observation in `observations`. Cells
// that already have the round (from a journal) are not timed again. False when interrupted.
bool run_timing_rounds(const std::vector<Batch>& batches, const SupervisorOptions& options, Observations& observations);

// The cells a timing round times, per batch: those whose first process ran, timed and without
// failing, that are no model, lack this round, and whose one run was within the round limit in their
// first round (a cell that took round 2 takes every round). Even
// rounds walk the batches and their cells backwards, so a cell's rounds lie far apart in time.
std::vector<Batch> timing_round_batches(const std::vector<Batch>& batches, const Observations& observations,
                                        const TimingRule& rule, int round);

// A round's observation of a cell into its first process's: its samples appended, the round counted;
// a failed round leaves a warning instead, and so do inputs that differ from the first process's.
void add_timing_round(ProcessObservation& first, const ProcessObservation& round_observation, int round);

// The work of the processes after the first, as groups of cells that may run side by side: per batch
// and process, the cells of one thread count split into as many parts as workers may run together
// (`jobs`, or the cores divided by those threads), a variant's cells in one part. Each part is a batch
// of its own.
struct ParallelGroup {
  int process = 1;
  std::vector<Batch> parts;
};
std::vector<ParallelGroup> parallel_groups(const std::vector<Batch>& batches, int processes, int jobs, int cores);

// The threads a cell's runs use: its `threads` setting, else every core.
int cell_threads(const Cell& cell, int cores);

// A worker ended by one of these signals was interrupted by a person, not crashed by its cell.
bool is_interruption_signal(int signal);

}  // namespace repro_audit
