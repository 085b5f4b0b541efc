#include "audit/activity_log.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "audit/audit.h"

namespace repro_audit {

void log_activity(const Report& report, const Observations& observations, const WorkerActivity& before,
                  const AuditPrograms& programs) {
  const char* path = std::getenv("REPRO_AUDIT_AUDIT_LOG");
  if (!path || !*path) return;
  std::int64_t op_ns = 0;
  for (const auto& [key, seen] : observations)
    for (const auto& observation : seen) {
      for (const auto& run : observation.runs) op_ns += run.time_ns;
      for (const auto sample : observation.timing_ns) op_ns += sample;
    }
  const auto now = worker_activity();
  const nlohmann::json line = {{"wall_s", report.duration_seconds},
                               {"cells", report.cells.size()},
                               {"workers", now.workers - before.workers},
                               {"startup_s", now.startup_seconds - before.startup_seconds},
                               {"op_s", static_cast<double>(op_ns) / 1e9},
                               {"worker", programs.worker},
                               {"supervisor", own_executable()},
                               {"cuda_facts", programs.cuda_facts},
                               {"fork_server_preloads", now.fork_server_preloads - before.fork_server_preloads}};
  std::ofstream(path, std::ios::app) << line.dump() << "\n";
}

}  // namespace repro_audit
