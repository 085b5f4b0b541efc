#pragma once
// The control kernels, registered as custom ops so probes call them like any op:
//   control::racy_accumulate(Tensor values, Tensor index, int slots) -> Tensor
//     sums values into slots in an order decided by thread scheduling (atomic adds).
//   control::ordered_accumulate(Tensor values, Tensor index, int slots) -> Tensor
//     the same sum, always in index order.
#include <ATen/core/Tensor.h>

namespace repro_audit {

at::Tensor racy_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots);
at::Tensor ordered_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots);

}  // namespace repro_audit
