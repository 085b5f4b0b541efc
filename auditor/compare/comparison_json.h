#pragma once
// `compare` and `gate` as JSON, "schema": "repro-audit.comparison/1".
#include <nlohmann/json.hpp>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

inline constexpr const char* kComparisonSchema = "repro-audit.comparison/1";

// `gate` is null for compare; with a gate, each cell carries its action and a "gate" object the outcome.
nlohmann::json comparison_to_json(const Comparison& comparison, const GateResult* gate);

}  // namespace repro_audit
