#pragma once
// The plain records the lower folders produce and the observation carries: a kernel launch as a
// tracer saw it, and a measured difference between two tensors (hash/tensor_digest.h).
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

}  // namespace repro_audit
