#pragma once
// The other half of reproducibility for `py` cells: the random sources a step drew from (Python's
// `random`, NumPy's global RNG, torch's generators, and the generator objects the step reaches), whether
// each was seeded alike in every process, and the cause of a divergence they explain: named before any
// op origin, with the line of the documented recipe that fixes it. The string hash seed
// (PYTHONHASHSEED) is found the same way: processes that hashed strings with different seeds differ.
#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace repro_audit {

// Fills verdict.random_sources from every process's sources, and verdict.cause where the runs diverged
// and an unseeded source or the hash seed explains it.
void judge_randomness(const std::vector<ProcessObservation>& observations, Verdict& verdict);

// "cause: ..." first, then one line naming each source: the cell's lines before the model's.
std::vector<std::string> randomness_lines(const Verdict& verdict);

}  // namespace repro_audit
