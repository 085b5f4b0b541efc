#pragma once
// `compare` and `gate` as one self-contained HTML page: environment diff, a row per cell coloured by
// its headline class, and the time ratios as inline SVG.
#include <string>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

// `gate` is null for compare.
std::string render_comparison_html(const Comparison& comparison, const GateResult* gate);

}  // namespace repro_audit
