#pragma once
// The audit's journal: where a fresh one goes, opening or resuming it, what it holds for this plan,
// and recording in it. The journal's files are supervisor/journal.h's.
#include <nlohmann/json.hpp>
#include <string>

#include "audit/audit.h"
#include "config/config.h"
#include "plan/plan.h"
#include "plan/resolved_device.h"
#include "supervisor/journal.h"
#include "supervisor/supervisor.h"

namespace repro_audit {

// $XDG_STATE_HOME/repro-audit/journals/STAMP-PID, else under ~/.local/state.
std::string default_journal_folder();

struct OpenedJournal {
  Journal journal;
  ResolvedDevice device;
};

// A resumed audit keeps the device it started on, even if `auto` would now resolve otherwise.
OpenedJournal open_journal(const Config& config, const std::string& folder, bool resume, const AuditOptions& options);

// A resumed shard runs the cells its journal names: the partition is not made again (the timings
// that balanced it may be gone).
ShardInfo journaled_shard(Plan& plan, const nlohmann::json& header, const std::string& folder);

// The journal's entries that belong to this plan and config (the journal gives at most one per cell
// run): a cell of the plan, a process of the config, runs this config makes of the cell
// (verdict/cell_runs.h), whatever the journal's header says. The rest is counted and reported once.
void take_journal_entries(const Journal& journal, const Plan& plan, const Config& config, const Catalogue& catalogue,
                          const AuditOptions& options, Observations& observations, SupervisorOptions& supervisor);

// A journal that cannot be written (a full disk, its folder removed) fails the machine, not the cell.
void record_in_journal(const Journal& journal, const Cell& cell, const ProcessObservation& observation);

}  // namespace repro_audit
