#pragma once
// `compare` and `gate` as Markdown for a GitHub job summary: the environment diff first.
#include <string>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

// `gate` is null for compare.
std::string render_comparison_markdown(const Comparison& comparison, const GateResult* gate);

}  // namespace repro_audit
