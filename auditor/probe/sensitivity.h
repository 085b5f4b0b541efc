#pragma once
// The sensitivity check: a probe's accumulated output (config/catalogue.h, AccumulationOrder) summed
// again in other orders, on the CPU with the cell's inputs, and how many of its elements then have
// other bits.
//
// The operand's elements (each a contribution, or a factor of one) are dealt into four chunks by a
// counter hash (the same on every host); the op runs once per chunk with the others multiplied by zero,
// and the four partial results are added in three orders: forward, reverse and in pairs. Each is the
// op's own sum in another order, so an element whose bits differ is one a kernel that reorders the sum
// (atomics, another thread count, another algorithm) could change. The op run with every contribution
// masked must give zeros: otherwise the operand does not carry the sum and the check says so.
#include <cstdint>
#include <optional>

#include "common/records.h"
#include "config/input_scheme.h"
#include "probe/probe.h"

namespace repro_audit {

// The variant measured with the inputs of `seed` under `scheme`; nullopt when the probe declares no
// accumulation. Throws Unsupported when the variant has no CPU form, std::runtime_error when the
// declaration does not fit the probe (no such output or input, or the masked op is not zero).
std::optional<Sensitivity> measure_sensitivity(const ProbeDefinition& probe, const VariantInfo& variant,
                                               std::uint64_t seed, InputScheme scheme);

}  // namespace repro_audit
