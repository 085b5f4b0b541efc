#pragma once
// The plain records the lower folders produce and the observation carries: a kernel launch as a
// tracer saw it, a measured difference between two tensors (hash/tensor_digest.h), and a probe's
// measured sensitivity to the order of accumulation.
#include <cstdint>
#include <string>

namespace repro_audit {

struct KernelRecord {
  std::string name;
  std::string grid;  // "x,y,z" where the backend has it
  std::string block;
  std::int64_t op = -1;  // the per-op record (its start order) it ran inside; -1 when not known
};

// The first output of a run that differs from run 0 of the same process, measured element-wise.
struct Divergence {
  std::string output;
  int run = 0;
  std::int64_t differing_elements = -1;  // -1: not measured (only digests were compared)
  std::int64_t elements = 0;
  double max_abs_difference = 0;
  double max_ulp_difference = 0;
};

// How much the order of accumulation changes one output of a probe with its inputs: the same
// contributions summed in other orders (probe/sensitivity.h), and how many of the output's elements
// then have other bits. Too few (below `floor`) and a kernel that reorders the sum would still give
// the same bits: the probe could not have seen such a divergence.
struct Sensitivity {
  std::string output;
  std::int64_t elements = 0;
  std::int64_t changed = 0;  // elements whose bits differ under at least one of the other orders
  int orders = 0;            // the other orders tried
  double floor = 0.1;

  double fraction() const { return elements > 0 ? static_cast<double>(changed) / static_cast<double>(elements) : 0.0; }
  bool insensitive() const { return changed == 0 || fraction() < floor; }
};

}  // namespace repro_audit
