#pragma once
// `compare` and `gate` on a terminal: the environment diff first, then every cell that changed.
#include <ostream>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

// `gate` is null for compare. SAME cells are counted, not listed.
void print_comparison(const Comparison& comparison, const GateResult* gate, std::ostream& out, bool color = false);

}  // namespace repro_audit
