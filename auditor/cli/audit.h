#pragma once
// One audit from config to report: plan, supervise workers, judge.
#include <functional>
#include <string>

#include "config/config.h"
#include "report/report.h"

namespace repro_audit {

struct AuditHooks {
  std::function<void(const Cell&, int process)> on_cell;  // progress
  std::function<bool()> stop_requested = [] { return false; };
};

Report run_audit(const Config& config, const Catalogue& catalogue, const AuditHooks& hooks);

nlohmann::json config_to_json(const Config& config);

// The path of the running binary, to start workers from.
std::string own_executable();

}  // namespace repro_audit
