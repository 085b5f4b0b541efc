// The audit's journal: where a fresh one goes, opening or resuming it, what it holds for this plan, and
// recording in it (audit/audit_journal.h).
#include "audit/audit_journal.h"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "config/config_json.h"
#include "common/user_error.h"
#include "report/json_io.h"
#include "verdict/cell_runs.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// $XDG_STATE_HOME, or ~/.local/state: the XDG spec says a relative path there is invalid and ignored.
fs::path state_folder() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && *state && fs::path(state).is_absolute()) return state;
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local" / "state";
}

// A cell run journaled as crashed by SIGINT/SIGHUP was interrupted by a person (journals of earlier
// versions recorded these): it runs again instead of standing as a verdict.
bool was_interrupted(const ProcessObservation& observation) {
  if (observation.status != ObservationStatus::crashed) return false;
  for (const char* signal : {"signal SIGINT", "signal SIGHUP"})
    if (observation.message.rfind(std::string("worker ended: ") + signal, 0) == 0) return true;
  return false;
}

}  // namespace

std::string default_journal_folder() {
  char stamp[32];
  const auto now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return (state_folder() / "repro-audit" / "journals" / fmt::format("{}-{}", stamp, ::getpid())).string();
}

ShardInfo journaled_shard(Plan& plan, const nlohmann::json& header, const std::string& folder) {
  try {
    auto shard = shard_from_json(header);
    const auto keys = header.at("cells").get<std::vector<std::string>>();
    const std::set<std::string> wanted(keys.begin(), keys.end());
    std::vector<Cell> cells;
    for (const auto& cell : plan.cells)
      if (wanted.count(cell.key)) cells.push_back(cell);
    if (cells.size() != wanted.size())
      throw UserError(fmt::format("{}: journal header: its shard names {} cells, the plan has {} of them", folder,
                                  wanted.size(), cells.size()));
    plan.cells = std::move(cells);
    return shard;
  } catch (const nlohmann::json::exception& error) {
    throw UserError(fmt::format("{}: malformed journal header: shard: {}", folder, error.what()));
  }
}

OpenedJournal open_journal(const Config& config, const std::string& folder, bool resume, const AuditOptions& options) {
  if (resume) {
    auto journal = Journal::open(folder);
    const auto& header = journal.header();
    if (!header.contains("device") || !header.at("device").is_string() ||
        !header.value("unavailable", nlohmann::json("")).is_string())
      throw UserError(folder + ": malformed journal header: 'device' must be a string");
    ResolvedDevice device{header.at("device").get<std::string>(), header.value("unavailable", "")};
    validate_device(device.device, folder + ": journal header");
    if (device.device == "auto")
      throw UserError(folder + ": malformed journal header: device 'auto' was never resolved");
    return {std::move(journal), std::move(device)};
  }
  auto device = options.resolve_device(config.device);
  auto journal = Journal::create(
      folder, {{"config", config_to_json(config)}, {"device", device.device}, {"unavailable", device.unavailable}});
  return {std::move(journal), std::move(device)};
}

void take_journal_entries(const Journal& journal, const Plan& plan, const Config& config, const Catalogue& catalogue,
                          const AuditOptions& options, Observations& observations, SupervisorOptions& supervisor) {
  std::map<std::string, const Cell*> cells;
  for (const auto& cell : plan.cells) cells.emplace(cell.key, &cell);
  auto read = journal.entries();
  for (auto& entry : read.entries) {
    const int process = entry.observation.process;
    const auto cell = cells.find(entry.key);
    std::string problem;
    if (cell == cells.end())
      problem = "for cells not in this audit's plan";
    else if (process < 0 || process >= config.processes)
      problem = fmt::format("for a process outside 0..{}", config.processes - 1);
    else if (was_interrupted(entry.observation))
      problem = "interrupted, not finished";
    else  // a journal of an earlier version keeps no fingerprint of the config its entries ran under
      problem =
          runs_problem(*cell->second, catalogue, entry.observation, config.repeats, config.warmup, config.processes);
    if (!problem.empty()) {
      ++read.set_aside[problem];
      continue;
    }
    supervisor.finished.insert({entry.key, process});
    observations[entry.key].push_back(std::move(entry.observation));
  }
  if (const auto message = set_aside_message(journal.folder(), read.set_aside); !message.empty() && options.on_warning)
    options.on_warning(message);
}

void record_in_journal(const Journal& journal, const Cell& cell, const ProcessObservation& observation) {
  try {
    journal.record(cell, observation);
  } catch (const UserError& error) {
    throw EnvironmentError(fmt::format("the journal {} cannot be written: {}", journal.folder(), error.what()));
  }
}

Config journal_config(const std::string& journal, const Catalogue& catalogue) {
  const auto opened = Journal::open(journal);
  const auto& header = opened.header();
  if (!header.contains("config")) throw UserError(journal + ": malformed journal header: no 'config'");
  const auto config = config_from_json(header.at("config"), journal);
  // A journal is a file on disk like any config: an unknown probe there must not reach a worker.
  try {
    validate_config(config, catalogue_with_models(catalogue, config.models), journal + ": journal header");
  } catch (const std::invalid_argument& error) {
    throw UserError(journal + ": journal header: " + error.what());
  }
  return config;
}

void remove_finished_journal(const AuditResult& result) {
  std::error_code ignored;  // a journal left behind costs disk space, not results
  if (result.own_journal && result.report.complete) fs::remove_all(result.journal, ignored);
}

}  // namespace repro_audit
