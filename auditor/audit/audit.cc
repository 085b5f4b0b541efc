#include "audit/audit.h"
#include "audit/activity_log.h"
#include "audit/audit_journal.h"
#include "audit/report_environment.h"
#include "audit/run_policy.h"
#include "audit/shared_sensitivity.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "config/config_json.h"
#include "common/user_error.h"
#include "common/version.h"
#include "report/json_io.h"
#include "supervisor/journal.h"
#include "supervisor/supervisor.h"
#include "supervisor/process_launcher.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

int count_runs(const std::vector<Batch>& batches, int processes) {
  int runs = 0;
  for (const auto& batch : batches) runs += static_cast<int>(batch.cells.size()) * processes;
  return runs;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The shard's cells of the plan, and what the report says of the shard.
ShardInfo take_shard(Plan& plan, const ShardSpec& spec, const Config& config, const Catalogue& catalogue,
                     const AuditOptions& options) {
  ShardInfo shard{spec.index,
                  spec.count,
                  spec.source,
                  options.timings.empty() ? "declared weights" : "timings from " + options.timings_source,
                  {}};
  const auto costs = expected_cell_costs(plan.cells, catalogue, config.repeats + config.warmup, options.timings);
  const auto assigned = partition_cells(costs, spec.count);
  std::vector<Cell> cells;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    shard.plan.push_back(plan.cells[i].key);
    if (assigned[i] == spec.index - 1) cells.push_back(plan.cells[i]);
  }
  plan.cells = std::move(cells);
  return shard;
}

// The report's form of the shard, and the cells it runs.
nlohmann::json shard_header(const ShardInfo& shard, const Plan& plan) {
  auto header = shard_to_json(shard);
  header["cells"] = nlohmann::json::array();
  for (const auto& cell : plan.cells) header["cells"].push_back(cell.key);
  return header;
}

// Keeps the cells that finished in every process (a partial cell is not a verdict); true when all did.
bool keep_finished_cells(Plan& plan, const Observations& observations, int processes) {
  std::vector<Cell> finished;
  for (const auto& cell : plan.cells) {
    auto it = observations.find(cell.key);
    if (!cell.unsupported_reason.empty() ||
        (it != observations.end() && static_cast<int>(it->second.size()) >= processes))
      finished.push_back(cell);
  }
  const bool complete = finished.size() == plan.cells.size();
  plan.cells = std::move(finished);
  return complete;
}

}  // namespace

std::string own_executable() { return fs::read_symlink("/proc/self/exe").string(); }

std::string worker_executable(const std::string& device, const std::vector<Cell>& cells,
                              const std::string& torch_program) {
  auto own = torch_program.empty() ? own_executable() : torch_program;
  if (device != "cpu") return own;
  for (const auto& cell : cells)
    if (cell.model && !is_python_model(*cell.model)) return own;
  const auto cpu = fs::path(own).parent_path() / "repro-audit-cpu";
  return ::access(cpu.c_str(), X_OK) == 0 ? cpu.string() : own;
}

// $TMPDIR, or /tmp (a worker's: the user's, supervisor/worker_folder.h); a file made there first.
std::string temporary_folder() {
  const std::string folder = user_tmpdir().value_or("/tmp");
  try {
    ::close(anonymous_file(folder));
  } catch (const EnvironmentError& error) {
    throw EnvironmentError(fmt::format(
        "{} (the workers' logs and the ranks' rendezvous are made there; set TMPDIR to a folder you can write)",
        error.what()));
  }
  return folder;
}

AuditResult run_audit(const Config& config, const Catalogue& catalogue, const AuditOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const auto activity_before = worker_activity();
  AuditResult result;
  result.own_journal = options.journal.empty();
  result.journal = result.own_journal ? default_journal_folder() : options.journal;
  SupervisorOptions supervisor;
  std::unique_ptr<WorkerLauncher> process_launcher;
  nlohmann::json kept_cuda_facts;  // null, or the CUDA facts kept from an earlier audit (AuditOptions)
  const auto temporary = options.launcher ? std::string() : temporary_folder();
  if (!options.launcher) remove_abandoned_worker_folders(temporary);  // an audit killed with SIGKILL left them
  supervisor.startup_allowance = options.startup_allowance;
  // Named members, not a structured binding, which the lambdas below could not capture (clang, C++20).
  std::error_code ignored;
  const bool journal_existed = std::filesystem::exists(result.journal, ignored);
  auto opened = [&] {
    try {
      return open_journal(config, result.journal, options.resume, options);
    } catch (const UserError& error) {
      if (!result.own_journal) throw;
      throw EnvironmentError(
          fmt::format("{} (the journal's default place: $XDG_STATE_HOME, else $HOME/.local/state; "
                      "give --journal DIR, or set XDG_STATE_HOME to a folder you can write)",
                      error.what()));
    }
  }();
  auto& journal = opened.journal;
  const auto& device = opened.device;
  // Refused before any result was kept: a journal made for it goes too, so the same command runs again.
  const auto discard_journal = [&] {
    if (options.resume) return;
    if (journal_existed)
      std::filesystem::remove(std::filesystem::path(result.journal) / "audit.json", ignored);
    else
      std::filesystem::remove_all(result.journal, ignored);
  };
  auto plan = [&] {
    try {
      return make_plan(config, catalogue, device.device);
    } catch (const UserError&) {
      discard_journal();
      throw;
    }
  }();
  std::optional<ShardInfo> shard;
  if (options.resume && journal.header().contains("shard"))
    shard = journaled_shard(plan, journal.header().at("shard"), result.journal);
  else if (options.shard && options.cells.empty()) {
    shard = take_shard(plan, *options.shard, config, catalogue, options);
    journal.set_header_field("shard", shard_header(*shard, plan));
  }
  if (!options.cells.empty()) {
    plan.cells = options.cells;
    plan.columns.clear();
    std::set<std::string> labels;
    for (const auto& cell : plan.cells)
      if (labels.insert(cell.label).second) plan.columns.push_back({cell.label, cell.settings});
  }
  if (!device.unavailable.empty())
    for (auto& cell : plan.cells) cell.unsupported_reason = device.unavailable;
  const auto own = options.torch_program.empty() ? own_executable() : options.torch_program;
  const auto worker = worker_executable(device.device, plan.cells, own);
  const bool workers_lack_cuda = !options.launcher && worker != own;
  if (!options.launcher) {
    auto launcher = std::make_unique<ProcessLauncher>(worker, temporary, "worker", options.interpreter);
    // Run from the front end, this process has no CUDA facts of its own to complete the CPU workers'
    // fingerprint with: its first worker is the program that has them (a worker it would start anyway),
    // unless those facts were kept from an earlier audit and still hold.
    if (workers_lack_cuda && !options.torch_program.empty()) {
      if (options.kept_cuda_facts) kept_cuda_facts = options.kept_cuda_facts(own).value_or(nullptr);
      if (kept_cuda_facts.is_null()) launcher->first_worker_runs(own);
    }
    process_launcher = std::move(launcher);
  }
  supervisor.launcher = options.launcher ? options.launcher : process_launcher.get();
  const auto costs = expected_cell_costs(plan.cells, catalogue, config.repeats + config.warmup, options.timings);
  auto batches = make_batches(plan.cells);
  if (options.budget_seconds > 0) {  // the shares go into the cells the batches carry
    share_budget(plan.cells, costs, config.processes, static_cast<int>(batches.size()) * config.processes,
                 options.budget_seconds);
    batches = make_batches(plan.cells);
  }
  result.total_runs = count_runs(batches, config.processes);
  if (options.on_start) options.on_start(result.journal);

  if (options.on_plan) options.on_plan(plan.cells, costs, config.processes);
  Observations observations;
  take_journal_entries(journal, plan, config, catalogue, options, observations, supervisor);
  result.resumed_runs = static_cast<int>(supervisor.finished.size());
  if (options.on_cell)
    for (const auto& cell : plan.cells)
      if (const auto it = observations.find(cell.key); it != observations.end())
        for (const auto& observation : it->second) options.on_cell(cell, observation);

  supervisor.device = device.device;
  supervisor.repeats = config.repeats;
  supervisor.warmup = config.warmup;
  supervisor.input_scheme = config.input_scheme;
  supervisor.processes = config.processes;
  supervisor.timing = options.timing;
  // Under --budget every cell's share pays for its one timing round (audit/run_policy.h).
  if (options.budget_seconds > 0) supervisor.timing.rounds = 1;
  supervisor.jobs = jobs_on(device_kind(device.device), options.jobs);
  supervisor.cores = options.cores;
  supervisor.measure_sensitivity = options.measure_sensitivity;
  supervisor.stop_requested = options.stop_requested;
  supervisor.throw_if_refused = options.throw_if_refused;
  supervisor.sensitivity_elsewhere = sensitivity_measured_elsewhere(batches);
  SeenEnvironment seen_environment;  // audit/report_environment.h
  supervisor.on_environment = [&](const nlohmann::json& seen, const FlagSet& process_settings) {
    seen_environment.add(seen, inherits_environment(process_settings));
  };
  int journaled = result.resumed_runs;
  bool results_allowed = !options.before_results;
  const auto allow_results = [&] {
    if (results_allowed) return;
    options.before_results();
    results_allowed = true;
  };
  supervisor.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    allow_results();
    record_in_journal(journal, cell, observation);
    ++journaled;
    if (options.on_cell) options.on_cell(cell, observation);
  };
  // The later timing rounds, once every cell's determinism runs are done (timing/timing.h).
  supervisor.on_round = [&](int round, const Batch& batch) {
    if (options.on_round) options.on_round(round, supervisor.timing.rounds, batch.cells);
  };
  supervisor.on_timing_round = [&](const Cell& cell, const ProcessObservation& observation) {
    allow_results();
    record_in_journal(journal, cell, observation);  // replaces the first process's entry
    if (options.on_timing_round) options.on_timing_round(cell, observation);
  };
  SupervisedRuns supervised;
  try {
    supervised = run_batches(batches, supervisor);
    for (auto& [key, seen] : supervised.observations)
      for (auto& observation : seen) observations[key].push_back(std::move(observation));
    if (!supervised.interrupted && supervisor.timing.rounds > 1)
      supervised.interrupted = !run_timing_rounds(batches, supervisor, observations);
    if (!supervised.interrupted) allow_results();
  } catch (const EnvironmentError& error) {
    // Before any result: a check still out may say why first (an interpreter without xxhash fails its
    // first worker too), and its refusal leaves no journal, as any refusal before a result.
    if (!results_allowed) {
      try {
        allow_results();
      } catch (const UserError&) {
        discard_journal();
        throw;
      }
    }
    if (!options.resumable) {  // nothing would resume it
      discard_journal();
      throw;
    }
    // The machine failed the audit, not a cell: what finished stays journaled for --resume.
    throw EnvironmentError(
        fmt::format("{}\nthe audit stopped; its {} finished cell run(s) are kept in the journal "
                    "{}: once that is fixed, --resume {} finishes it",
                    error.what(), journaled, result.journal, result.journal));
  } catch (const UserError&) {
    if (!results_allowed) discard_journal();  // refused before any result was kept (before_results)
    throw;
  }
  for (auto& [key, seen] : observations)
    std::sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.process < b.process; });

  share_sensitivity(plan.cells, observations);
  const bool complete = keep_finished_cells(plan, observations, config.processes) && !supervised.interrupted;
  result.report = build_report(plan, observations, catalogue);
  result.report.complete = complete;
  result.report.tool_version = kToolVersion;
  result.report.documentation = options.documentation;
  result.report.host = host_name();
  result.report.shard = shard;
  result.report.environment = seen_environment.report(workers_lack_cuda, options.environment, kept_cuda_facts);
  result.report.config = config_to_json(config);
  result.report.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log_activity(result.report, observations, activity_before,
               {options.launcher ? "" : worker, seen_environment.cuda_facts_from()});
  return result;
}

}  // namespace repro_audit
