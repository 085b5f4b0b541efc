#pragma once
// A variant's sensitivity check (probe/sensitivity.h) depends on its inputs alone, not on the flag set:
// one audit measures it once, in one process (supervisor.h: sensitivity_process) of the first batch
// holding the variant, and every other cell of the variant takes that measurement.
#include <set>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "supervisor/supervisor.h"

namespace repro_audit {

// The cells (by key) of each variant and seed after its first batch's: their workers skip the check.
std::set<std::string> sensitivity_measured_elsewhere(const std::vector<Batch>& batches);

// A cell none of whose observations holds a sensitivity takes, in its first, the one its variant's
// measuring cell made.
void share_sensitivity(const std::vector<Cell>& cells, Observations& observations);

}  // namespace repro_audit
