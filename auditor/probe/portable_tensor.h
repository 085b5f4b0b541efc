#pragma once
// Tensors of the portable input scheme (inputs/portable_values.h), made on the CPU: element i holds
// value i of the stream, written as its bit pattern, so no ATen kernel touches the values.
#include <ATen/ATen.h>

#include "inputs/portable_values.h"

namespace repro_audit {

enum class PortableKind {
  spread,   // signed, spread exponents (floating dtypes)
  unit,     // uniform on [0, 1) (floating dtypes)
  integer,  // uniform on [low, high) (int64)
};

// Throws std::invalid_argument for a dtype the kind has no values of.
at::Tensor portable_tensor(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                           std::int64_t low = 0, std::int64_t high = 0);

}  // namespace repro_audit
