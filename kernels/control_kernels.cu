// CUDA kernels of the control ops: atomicAdd in whatever order the warps reach it, and a fixed-order
// twin: one block per slot, each thread summing the values at its own fixed positions in index order,
// then the threads' sums added in one fixed tree.
#include <cuda_runtime.h>

#include <algorithm>

#include "busy_work.h"
#include "control_kernels.h"

namespace repro_audit {
namespace {

__global__ void racy_accumulate_kernel(const float* values, const std::int64_t* index, std::int64_t n, float* out) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    atomicAdd(out + index[k], values[k]);
}

constexpr int kOrderedThreads = 512;

__global__ void ordered_accumulate_kernel(const float* values, const std::int64_t* index, std::int64_t n, float* out) {
  __shared__ float sums[kOrderedThreads];
  const std::int64_t slot = blockIdx.x;
  float sum = 0;
  for (std::int64_t k = threadIdx.x; k < n; k += kOrderedThreads)
    if (index[k] == slot) sum += values[k];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kOrderedThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[slot] = sums[0];
}

__global__ void busy_work_kernel(std::int64_t iterations, std::int64_t keep_at, std::int64_t* out) {
  std::uint64_t kept = 0;
  const auto last = busy_steps(iterations, keep_at, kept);
  out[0] = static_cast<std::int64_t>(kept >> 1);
  if (last == 0) out[0] = -1;  // never true: keeps the steps after keep_at
}

}  // namespace

int launch_racy_accumulate(const float* values, const std::int64_t* index, std::int64_t n, float* out, void* stream) {
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + threads - 1) / threads, 4096));
  if (n > 0) racy_accumulate_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(values, index, n, out);
  return static_cast<int>(cudaGetLastError());
}

int launch_ordered_accumulate(const float* values, const std::int64_t* index, std::int64_t n, std::int64_t slots,
                              float* out, void* stream) {
  if (slots > 0)
    ordered_accumulate_kernel<<<static_cast<unsigned>(slots), kOrderedThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        values, index, n, out);
  return static_cast<int>(cudaGetLastError());
}

int launch_busy_work(std::int64_t iterations, std::int64_t keep_at, std::int64_t* out, void* stream) {
  busy_work_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(iterations, keep_at, out);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace repro_audit
