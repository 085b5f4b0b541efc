#pragma once
// Tensors of the portable input scheme (inputs/portable_values.h): element i holds value i of the
// stream, written as its bit pattern. On the CPU each element is made by the integer code itself; on
// another device by that device's 64-bit integer kernels (wrapping multiply, shifts, masks, remainder)
// and exact conversions only, so the bits are the same without a copy from the host.
#include <ATen/ATen.h>

#include "inputs/portable_values.h"

namespace repro_audit {

enum class PortableKind {
  spread,   // signed, spread exponents (floating dtypes)
  unit,     // uniform on [0, 1) (floating dtypes)
  integer,  // uniform on [low, high) (int64)
};

// Made where `device` is (the CPU by default). Throws std::invalid_argument for a dtype the kind has no
// values of, or an empty integer range.
at::Tensor portable_tensor(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                           std::int64_t low = 0, std::int64_t high = 0, const at::Device& device = at::kCPU);

// The device's way on any device, the CPU too (tests hold it to the integer code bit for bit).
at::Tensor portable_tensor_by_kernels(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                                      std::int64_t low, std::int64_t high, const at::Device& device);

}  // namespace repro_audit
