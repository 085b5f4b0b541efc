#pragma once
// One batch's cells for one process, in workers started one after another: each cell's time limit, a
// fresh worker after a crash or a worker that never started, every finished cell handed on at once.
// Which batches run, in which order and side by side, is supervisor/supervisor.h's.
#include <mutex>

#include "plan/plan.h"
#include "supervisor/supervisor.h"

namespace repro_audit {

// Runs the batch's cells that `options.finished` lacks for `process` until each has an observation,
// added to `observations` (and given to `options.on_cell`) under `lock`, which guards them when
// batches run side by side; `untimed` marks the observations of a worker that ran beside others.
// False when interrupted.
bool run_batch(const Batch& batch, int process, const SupervisorOptions& options, Observations& observations,
               std::mutex& lock, bool untimed = false);

// A later timing round of the batch's cells: each cell's samples go to its first process's
// observation, already in `observations`. False when interrupted.
bool run_timing_round(const Batch& batch, int round, const SupervisorOptions& options, Observations& observations,
                      std::mutex& lock);

}  // namespace repro_audit
