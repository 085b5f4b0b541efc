#include "audit/run_policy.h"

#include "common/user_error.h"

namespace repro_audit {

RunPolicy decide_run_policy(const RunRequest& request, const TimingRule& defaults) {
  RunPolicy policy;
  policy.timing = defaults;
  policy.budget_seconds = request.budget_seconds;
  policy.jobs = request.jobs.value_or(request.no_cost ? 0 : 1);
  const bool budget = request.budget_seconds > 0;
  policy.timing.rounds = request.timing_rounds.value_or(budget || request.no_cost ? 1 : defaults.rounds);
  if (request.no_cost && !request.timing_rounds) {
    policy.timing.budget_seconds = 0;
    policy.timing.min_samples = 0;
  }
  if (budget && policy.timing.rounds > 1)
    throw UserError("--timing-rounds: under --budget a cell's share pays for one timing round only; leave it out");
  return policy;
}

int jobs_on(const std::string& device_kind, int jobs) { return jobs == 0 && device_kind != "cpu" ? 1 : jobs; }

}  // namespace repro_audit
