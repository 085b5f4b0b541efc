#pragma once
// `py` cells that make a DataLoader: where two processes' batches part (another order of samples, or
// the same samples with other content, and which), whether every epoch repeats one shuffled order, and
// whether workers share one random stream (they start a generator in one state and draw from it).
#include <vector>

#include "verdict/verdict.h"

namespace repro_audit {

// The first batch that differs goes to verdict.origin_note where the runs diverged; an epoch order that
// repeats and workers that share a stream go to verdict.findings, diverged or not.
void judge_loader(const std::vector<ProcessObservation>& observations, Verdict& verdict);

}  // namespace repro_audit
