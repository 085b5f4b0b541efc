#pragma once
// How an audit spends its time and workers, decided once from what was asked: how many workers run
// side by side, the timing rounds and the timing rule, and the time budget. `run` asks for it; the
// audit applies what it decided (and what it decides for a GPU, where workers share one device).
#include <optional>
#include <string>

#include "timing/timing.h"

namespace repro_audit {

// What the command line asked for; unset: the defaults below.
struct RunRequest {
  std::optional<int> jobs;           // --jobs
  std::optional<int> timing_rounds;  // --timing-rounds
  double budget_seconds = 0;         // --budget, in seconds; 0: none
  bool no_cost = false;              // --no-cost
};

struct RunPolicy {
  // Workers side by side for the processes after the first; 0: the cores divided by each cell's threads.
  int jobs = 1;
  TimingRule timing;
  double budget_seconds = 0;
};

// Side by side, the later processes' runs are untimed: the timings then come from one process, one
// stretch of time, so by default only an audit that reports no costs runs its workers side by side.
// Timing rounds cost a small audit a few seconds (fresh workers, inputs drawn again): one without
// costs, or under a budget, takes one; without costs there are no timing-only runs either (the
// determinism runs' times are the timings). Throws UserError for --timing-rounds above 1 under --budget,
// whose per-cell share pays for one round.
RunPolicy decide_run_policy(const RunRequest& request, const TimingRule& defaults = {});

// The workers side by side on `device_kind` ("cpu", "cuda"): as decided on the CPU; workers on one GPU
// would share its memory and queues, so one at a time there unless a number was asked for.
int jobs_on(const std::string& device_kind, int jobs);

}  // namespace repro_audit
