#pragma once
// Digests and element-wise comparison of torch tensors, on the CPU copy of their values.
#include <torch/types.h>

#include <string>

#include "common/records.h"

namespace repro_audit {

std::string digest_tensor(const at::Tensor& tensor);

// The tensor as the canonical form sees it: dense, on the CPU, contiguous.
at::Tensor canonical_tensor(const at::Tensor& tensor);

// Differing elements (bitwise), max absolute and max ULP difference between two canonical tensors.
Divergence compare_tensors(const std::string& output, int run, const at::Tensor& reference, const at::Tensor& other);

}  // namespace repro_audit
