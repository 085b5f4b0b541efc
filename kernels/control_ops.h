#pragma once
// The control kernels, registered as custom ops so probes call them like any op:
//   control::racy_accumulate(Tensor values, Tensor index, int slots) -> Tensor
//     sums values into slots in an order decided by thread scheduling (atomic adds).
//   control::ordered_accumulate(Tensor values, Tensor index, int slots) -> Tensor
//     the same sum, always in index order.
//   control::row_sum_by_batch(Tensor rows) -> Tensor
//     each row of a 2-d float32 tensor summed into 1, 4 or 16 interleaved partial sums, chosen by
//     the number of rows (as a BLAS picks a kernel by M): batch-variant by construction.
//   control::row_sum_fixed(Tensor rows) -> Tensor
//     the same with 4 partial sums whatever the batch: its batch-invariant twin.
//   control::busy_work(Tensor like, int iterations, int keep_at) -> Tensor
//     `iterations` dependent xorshift64 steps on like's device (one GPU thread on CUDA): work of a
//     known length for the timing control; the int64 output is the state after `keep_at` steps.
#include <ATen/core/Tensor.h>

namespace repro_audit {

at::Tensor racy_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots);
at::Tensor ordered_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots);
at::Tensor row_sum_by_batch(const at::Tensor& rows);
at::Tensor row_sum_fixed(const at::Tensor& rows);
at::Tensor busy_work(const at::Tensor& like, std::int64_t iterations, std::int64_t keep_at);

}  // namespace repro_audit
