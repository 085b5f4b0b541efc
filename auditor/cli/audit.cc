#include "cli/audit.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>

#include "config/config_json.h"
#include "config/version.h"
#include "supervisor/journal.h"
#include "supervisor/supervisor.h"
#include "worker/device.h"
#include "worker/environment.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

std::string default_journal_folder() {
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = state && *state ? fs::path(state) : fs::path(home ? home : "/tmp") / ".local" / "state";
  char stamp[32];
  const auto now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return (base / "repro-audit" / "journals" / fmt::format("{}-{}", stamp, ::getpid())).string();
}

int count_runs(const std::vector<Batch>& batches, int processes) {
  int runs = 0;
  for (const auto& batch : batches) runs += static_cast<int>(batch.cells.size()) * processes;
  return runs;
}

}  // namespace

std::string own_executable() { return fs::read_symlink("/proc/self/exe").string(); }

Config journal_config(const std::string& journal) {
  const auto opened = Journal::open(journal);
  return config_from_json(opened.header().at("config"), journal);
}

namespace {

struct OpenedJournal {
  Journal journal;
  ResolvedDevice device;
};

// A resumed audit keeps the device it started on, even if `auto` would now resolve otherwise.
OpenedJournal open_journal(const Config& config, const std::string& folder, bool resume) {
  if (resume) {
    auto journal = Journal::open(folder);
    ResolvedDevice device{journal.header().at("device").get<std::string>(), journal.header().value("unavailable", "")};
    return {std::move(journal), std::move(device)};
  }
  auto device = resolve_device(config.device);
  auto journal = Journal::create(
      folder, {{"config", config_to_json(config)}, {"device", device.device}, {"unavailable", device.unavailable}});
  return {std::move(journal), std::move(device)};
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

AuditResult run_audit(const Config& config, const Catalogue& catalogue, const AuditOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  AuditResult result;
  const bool own_journal = options.journal.empty();
  result.journal = own_journal ? default_journal_folder() : options.journal;
  const auto [journal, device] = open_journal(config, result.journal, options.resume);
  auto plan = make_plan(config, catalogue, device.device);
  if (!device.unavailable.empty())
    for (auto& cell : plan.cells) cell.unsupported_reason = device.unavailable;
  const auto batches = make_batches(plan.cells);
  result.total_runs = count_runs(batches, config.processes);
  if (options.on_start) options.on_start(result.journal);

  Observations observations;
  SupervisorOptions supervisor;
  for (auto& entry : journal.entries()) {
    supervisor.finished.insert({entry.key, entry.observation.process});
    observations[entry.key].push_back(std::move(entry.observation));
  }
  result.resumed_runs = static_cast<int>(supervisor.finished.size());

  const auto log_folder = fs::temp_directory_path() / ("repro-audit-" + std::to_string(::getpid()));
  fs::create_directories(log_folder);
  supervisor.executable = own_executable();
  supervisor.device = device.device;
  supervisor.repeats = config.repeats;
  supervisor.warmup = config.warmup;
  supervisor.processes = config.processes;
  supervisor.log_folder = log_folder.string();
  supervisor.stop_requested = options.stop_requested;
  nlohmann::json environment;
  supervisor.on_environment = [&](const nlohmann::json& seen) {
    if (environment.is_null()) environment = seen;
  };
  supervisor.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    journal.record(cell, observation);
    if (options.on_cell) options.on_cell(cell, observation.process);
  };
  for (auto& [key, seen] : run_batches(batches, supervisor))
    for (auto& observation : seen) observations[key].push_back(std::move(observation));
  fs::remove_all(log_folder);
  for (auto& [key, seen] : observations)
    std::sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.process < b.process; });

  const bool complete = keep_finished_cells(plan, observations, config.processes);
  result.report = build_report(plan, observations, catalogue);
  result.report.complete = complete;
  result.report.tool_version = kToolVersion;
  result.report.environment = environment.is_null() ? environment_fingerprint() : environment;
  result.report.config = config_to_json(config);
  result.report.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (complete && own_journal) fs::remove_all(result.journal);
  return result;
}

}  // namespace repro_audit
