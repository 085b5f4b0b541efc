#pragma once
// The sensitivity check's table (probe/sensitivity_check.h), for `list --sensitivity` and `selftest`.
#include <ostream>
#include <vector>

#include "probe/sensitivity_check.h"

namespace repro_audit {

// Prints one line per variant; returns how many are insensitive (but by design) or could not be checked.
int print_sensitivities(const std::vector<VariantSensitivity>& results, std::uint64_t seed, std::ostream& out);

}  // namespace repro_audit
