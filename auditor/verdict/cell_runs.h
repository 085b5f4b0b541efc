#pragma once
// How many runs a process makes of a cell under an audit's repeats, warm-up and processes: the worker
// runs them, and a resumed audit refuses a journal entry whose runs another config made.
#include <string>

#include "config/catalogue.h"
#include "plan/plan.h"
#include "verdict/observation.h"

namespace repro_audit {

// Each process's share of verdict.h's kQuietRuns.
int quiet_runs_per_process(int processes);

// The runs after the warm-up a worker makes of `cell` (before its kind's extra runs): the kind's share
// of the `requested` repeats, or `quiet_runs` when more and the cell is documented as possibly
// diverging, its runs stop at the first difference and no --budget shares the time out.
int cell_repeats(const Cell& cell, const Catalogue& catalogue, int requested, int quiet_runs);

// Why `observation` cannot be one process's runs of `cell` under `repeats`, `warmup` and `processes`
// (its warm-up runs are not the first `warmup` runs, or there are more runs after them than the config
// makes, or fewer though none stopped them), or "" when it can: whatever --budget either audit had.
std::string runs_problem(const Cell& cell, const Catalogue& catalogue, const ProcessObservation& observation,
                         int repeats, int warmup, int processes);

}  // namespace repro_audit
