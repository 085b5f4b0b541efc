#pragma once
// What an explained cell's two sides differ in besides the bits (inputs, kernels by name, what their
// libraries key on), and what pinning the portable settings costs here.
#include <string>

#include "explain/explain.h"

namespace repro_audit {

// Fills the cell's inputs, kernels, kernel changes, and each changed library's keys and pin.
void describe_sides(CellExplanation& cell, const Snapshot& before, const Snapshot& after, const Comparison& comparison,
                    const CellComparison& compared);

// "1.42x slower here (3.10 ms vs 2.18 ms)", or no cost when the spreads overlap.
std::string cost_text(const Timing& as_is, const Timing& pinned);

}  // namespace repro_audit
