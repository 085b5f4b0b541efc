// CUDA implementations of the control ops: atomicAdd in whatever order the warps reach it, and a
// fixed-order twin with one thread per slot walking the values in index order.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "busy_work.h"
#include "control_ops.h"

namespace repro_audit {
namespace {

__global__ void racy_accumulate_kernel(const float* values, const std::int64_t* index, std::int64_t n, float* out) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    atomicAdd(out + index[k], values[k]);
}

__global__ void ordered_accumulate_kernel(const float* values, const std::int64_t* index, std::int64_t n,
                                          std::int64_t slots, float* out) {
  const std::int64_t slot = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (slot >= slots) return;
  float sum = 0;
  for (std::int64_t k = 0; k < n; ++k)
    if (index[k] == slot) sum += values[k];
  out[slot] = sum;
}

__global__ void busy_work_kernel(std::int64_t iterations, std::int64_t keep_at, std::int64_t* out) {
  std::uint64_t kept = 0;
  const auto last = busy_steps(iterations, keep_at, kept);
  out[0] = static_cast<std::int64_t>(kept >> 1);
  if (last == 0) out[0] = -1;  // never true: keeps the steps after keep_at
}

at::Tensor busy_work_cuda(const at::Tensor& like, std::int64_t iterations, std::int64_t keep_at) {
  const c10::cuda::CUDAGuard guard(like.device());
  auto output = at::empty({1}, like.options().dtype(at::kLong));
  busy_work_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(iterations, keep_at, output.data_ptr<std::int64_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}

void check_inputs(const at::Tensor& values, const at::Tensor& index) {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == at::kFloat, "values must be a 1-d float32 tensor");
  TORCH_CHECK(index.dim() == 1 && index.scalar_type() == at::kLong && index.numel() == values.numel(),
              "index must be a 1-d int64 tensor as long as values");
}

at::Tensor racy_accumulate_cuda(const at::Tensor& values_in, const at::Tensor& index_in, std::int64_t slots) {
  check_inputs(values_in, index_in);
  const c10::cuda::CUDAGuard guard(values_in.device());
  const auto values = values_in.contiguous();
  const auto index = index_in.contiguous();
  auto output = at::zeros({slots}, values.options());
  const std::int64_t n = values.numel();
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + threads - 1) / threads, 4096));
  if (n > 0)
    racy_accumulate_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        values.data_ptr<float>(), index.data_ptr<std::int64_t>(), n, output.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}

at::Tensor ordered_accumulate_cuda(const at::Tensor& values_in, const at::Tensor& index_in, std::int64_t slots) {
  check_inputs(values_in, index_in);
  const c10::cuda::CUDAGuard guard(values_in.device());
  const auto values = values_in.contiguous();
  const auto index = index_in.contiguous();
  auto output = at::zeros({slots}, values.options());
  const int threads = 128;
  const int blocks = static_cast<int>((slots + threads - 1) / threads);
  if (slots > 0)
    ordered_accumulate_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        values.data_ptr<float>(), index.data_ptr<std::int64_t>(), values.numel(), slots, output.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}

}  // namespace

TORCH_LIBRARY_IMPL(control, CUDA, m) {
  m.impl("racy_accumulate", racy_accumulate_cuda);
  m.impl("ordered_accumulate", ordered_accumulate_cuda);
  m.impl("busy_work", busy_work_cuda);
}

}  // namespace repro_audit
