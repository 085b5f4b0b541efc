#pragma once
// REPRO_AUDIT_AUDIT_LOG=FILE: a JSON line per audit, for the tests and tools/test-profile (README: Tests).
#include <string>

#include "report/report.h"
#include "supervisor/supervisor.h"

namespace repro_audit {

struct AuditPrograms {
  std::string worker;  // the workers' binary ("" with a launcher of the caller's)
  // Where the report's CUDA facts came from: "workers", "a worker" (the first, repro-audit-torch, beside
  // CPU workers that lack them), "the supervisor" (AuditOptions::environment): audit/report_environment.h.
  std::string cuda_facts;
};

// Appends the audit's wall time, the workers it started and their start-up time, the modules fork servers
// imported at a first round's worker's word, its ops' time (every run and timing sample), `programs` and
// this process's binary (the supervisor's) to the file
// REPRO_AUDIT_AUDIT_LOG names; nothing when it is unset.
void log_activity(const Report& report, const Observations& observations, const WorkerActivity& before,
                  const AuditPrograms& programs);

}  // namespace repro_audit
