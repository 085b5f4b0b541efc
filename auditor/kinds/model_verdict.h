#pragma once
// The verdict rules a model cell adds: which outputs diverged, the origin of divergence from the
// per-op records, and the growth over SGD steps.
#include <vector>

#include "plan/plan.h"
#include "verdict/verdict.h"

namespace repro_audit {

void judge_model(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict);

}  // namespace repro_audit
