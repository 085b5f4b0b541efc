#pragma once
// `gate` as JUnit XML: a testsuite per probe, a testcase per cell key.
#include <string>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

// A cell the gate fails is a <failure> naming its failing classes; a cell missing from the new
// snapshot is <skipped>; warnings and other changes go to <system-out>. Without a gate (compare)
// nothing fails.
std::string render_comparison_junit(const Comparison& comparison, const GateResult* gate);

}  // namespace repro_audit
