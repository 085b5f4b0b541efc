#include "cli/audit.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

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

AuditResult run_audit(const Config& config, const Catalogue& catalogue, const AuditOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  AuditResult result;
  const bool own_journal = options.journal.empty();
  result.journal = own_journal ? default_journal_folder() : options.journal;
  // A resumed audit keeps the device it started on, even if `auto` would now resolve otherwise.
  std::optional<Journal> opened;
  ResolvedDevice device;
  if (options.resume) {
    opened = Journal::open(result.journal);
    device = {opened->header().at("device").get<std::string>(), opened->header().value("unavailable", "")};
  } else {
    device = resolve_device(config.device);
    opened = Journal::create(
        result.journal,
        {{"config", config_to_json(config)}, {"device", device.device}, {"unavailable", device.unavailable}});
  }
  const Journal& journal = *opened;
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

  int finished = 0;
  for (const auto& [key, seen] : observations) finished += static_cast<int>(seen.size());
  const bool complete = finished >= result.total_runs;
  if (!complete) {
    // Leave out cells that did not finish in every process: a partial cell is not a verdict.
    std::vector<Cell> done;
    for (const auto& cell : plan.cells)
      if (!cell.unsupported_reason.empty() ||
          (observations.count(cell.key) && static_cast<int>(observations.at(cell.key).size()) == config.processes))
        done.push_back(cell);
    plan.cells = std::move(done);
  }
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
