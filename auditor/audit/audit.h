#pragma once
// One audit from config to report: plan, journal, supervise workers, judge. Torch-free: the torch side's
// services (resolving `auto`, the fingerprint, the py runner) and the worker launcher come from the caller.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "plan/plan.h"
#include "plan/resolved_device.h"
#include "plan/shard.h"
#include "report/report.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {

struct AuditOptions {
  std::string journal;  // folder; empty: a fresh one under the user's state folder
  bool resume = false;  // continue the journal's audit: finished cell runs are not run again
  std::function<void(const std::string& journal)> on_start;
  bool resumable = true;  // false: no --resume follows (explain, selftest): a machine's failure takes its journal away
  // The cells to run (after sharding) with each one's expected seconds (plan/shard.h) and the
  // processes per cell; then every (cell, process) that finished, those taken from a journal first.
  std::function<void(const std::vector<Cell>&, const std::vector<double>& expected_seconds, int processes)> on_plan;
  std::function<void(const Cell&, const ProcessObservation&)> on_cell;
  // The later timing rounds (timing/timing.h): a round starts on some cells; a cell got its samples.
  std::function<void(int round, int rounds, const std::vector<Cell>& cells)> on_round;
  std::function<void(const Cell&, const ProcessObservation&)> on_timing_round;
  std::function<void(const std::string& warning)> on_warning;
  std::function<bool()> stop_requested = [] { return false; };
  // Awaited before the first result is journaled, and once the runs end: what was started beside the
  // audit's workers (a py cell's interpreter check) and may still refuse it. A UserError from it ends
  // the audit with nothing kept: a journal this audit created is removed again. throw_if_refused: the
  // same, polled while the workers load, for a refusal that has come in already (it never waits).
  std::function<void()> before_results;
  std::function<void()> throw_if_refused;
  // Required: `auto`/`cuda` -> a concrete device, and the environment fingerprint used when no worker
  // reported one (every cell skipped, py cells alone: their interpreter reports only its own facts).
  std::function<ResolvedDevice(const std::string& requested)> resolve_device;
  std::function<nlohmann::json()> environment;
  // Which torch's documentation the catalogue's declarations are (config/documentation.h), for the report.
  std::optional<DocumentationSource> documentation;
  // Non-empty: audit exactly these cells (e.g. `explain`'s candidates) instead of the config's plan; the
  // config still gives repeats, processes and the device.
  std::vector<Cell> cells;
  // Set: audit only this shard of the plan, balanced by `timings` (median ns of one run by cell key,
  // from `timings_source`) where given, else by the probes' declared weights. A resumed audit takes
  // its shard from the journal.
  std::optional<ShardSpec> shard;
  std::map<std::string, std::int64_t> timings;
  std::string timings_source;
  // Null: `repro-audit worker` processes of this binary, logging to $TMPDIR (py cells': as `interpreter` says).
  WorkerLauncher* launcher = nullptr;
  // The program with libtorch whose workers run the cells: empty, this one. The front end, which runs CPU
  // audits without loading libtorch (cli/torch_side.h), names repro-audit-torch beside it; the first
  // worker of such an audit is that program, whose fingerprint has the CUDA facts that the CPU workers'
  // lack (repro-audit-cpu's), unless `kept_cuda_facts` has them; `environment` is asked only when no such
  // worker spoke.
  std::string torch_program;
  // Set: the CUDA facts kept for `torch_program` from an earlier audit, where still true (the front end's:
  // fingerprint/kept_cuda_facts.h), else nullopt. Where it has them, the first worker is a CPU worker too.
  std::function<std::optional<nlohmann::json>(const std::string& torch_program)> kept_cuda_facts;
  InterpreterLaunch interpreter;
  // How long a worker may take to load before its first cell (tests shorten it).
  std::chrono::milliseconds startup_allowance = std::chrono::seconds(60);
  TimingRule timing;          // when each cell's timing-only runs stop (timing/timing.h)
  double budget_seconds = 0;  // > 0: the time budget in seconds (--budget), shared by expected cost
  // Workers side by side for the processes after the first (supervisor/supervisor.h); 0: the cores
  // divided by each cell's threads on the CPU, one at a time on a GPU.
  int jobs = 1;
  int cores = 1;
  bool measure_sensitivity = true;  // false: no sensitivity check (selftest's parity reads verdicts alone)
};

struct AuditResult {
  Report report;  // when incomplete, only the cells whose every process finished
  std::string journal;
  bool own_journal = false;  // the folder was made for this audit: remove it once every output is written
  int resumed_runs = 0;      // cell runs taken from the journal
  int total_runs = 0;
};

// Throws UserError before any cell runs when the journal or temporary folder cannot be used.
AuditResult run_audit(const Config& config, const Catalogue& catalogue, const AuditOptions& options);

// Removes the journal of a complete audit that made its own; call only after every output is written.
void remove_finished_journal(const AuditResult& result);

// The config an interrupted audit was started with, validated like a config file.
Config journal_config(const std::string& journal, const Catalogue& catalogue);

// The path of the running binary, to start workers from.
std::string own_executable();

// The binary the workers of `cells` on `device` (resolved: "cpu", "cuda:0", ...) run: for the CPU,
// repro-audit-cpu when it sits beside `torch_program` (a CUDA build's same program without libtorch's CUDA
// half: it starts in half the time), else `torch_program`; that one for TorchScript or AOTInductor models
// (an AOTInductor package's library needs the whole of libtorch, libtorch.so). Empty: this binary.
std::string worker_executable(const std::string& device, const std::vector<Cell>& cells = {},
                              const std::string& torch_program = "");

// $TMPDIR, or /tmp, for the workers' logs; throws UserError when no file can be made there.
std::string temporary_folder();

}  // namespace repro_audit
