#pragma once
// The sensitivity check of every variant that declares an accumulation (probe/sensitivity.h), run in
// this process on the CPU: for `list --sensitivity` and `selftest`. Torch-free, for the CLI.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/records.h"

namespace repro_audit {

struct VariantSensitivity {
  std::string probe;
  std::string variant;
  std::optional<Sensitivity> sensitivity;  // measured
  std::string skipped;                     // why not: no CPU form, or the probe's order is out of reach
  std::string problem;                     // the check failed: the declaration does not fit the probe
  std::string by_design;                   // why the variant is insensitive by design (VariantInfo)
};

// The probes named (all in the default suite and the controls when `probes` is empty), with the
// inputs of `seed` under the current input scheme, each op on one thread (the bits do not depend on the
// machine's cores); up to `threads` variants (at most 4) at once, in the catalogue's order all the same.
std::vector<VariantSensitivity> check_sensitivities(const std::vector<std::string>& probes, std::uint64_t seed,
                                                    int threads = 1);

}  // namespace repro_audit
