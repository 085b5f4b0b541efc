#pragma once
// One audit from config to report: plan, journal, supervise workers, judge.
#include <functional>
#include <string>

#include "config/config.h"
#include "report/report.h"

namespace repro_audit {

struct AuditOptions {
  std::string journal;  // folder; empty: a fresh one under the user's state folder, removed when complete
  bool resume = false;  // continue the journal's audit: finished cell runs are not run again
  std::function<void(const std::string& journal)> on_start;
  std::function<void(const Cell&, int process)> on_cell;
  std::function<bool()> stop_requested = [] { return false; };
};

struct AuditResult {
  Report report;  // when incomplete, only the cells whose every process finished
  std::string journal;
  int resumed_runs = 0;  // cell runs taken from the journal
  int total_runs = 0;
};

AuditResult run_audit(const Config& config, const Catalogue& catalogue, const AuditOptions& options);

// The config an interrupted audit was started with.
Config journal_config(const std::string& journal);

// The path of the running binary, to start workers from.
std::string own_executable();

}  // namespace repro_audit
