#pragma once
// The control ops' CUDA kernels behind plain launch functions: nvcc compiles only the kernels (seconds),
// and control_ops_cuda.cc, compiled like every other C++ file, wraps them in ATen ops. Each launches on
// `stream` (a cudaStream_t) and returns the launch's cudaError_t as an int.
#include <cstdint>

namespace repro_audit {

int launch_racy_accumulate(const float* values, const std::int64_t* index, std::int64_t n, float* out, void* stream);
int launch_ordered_accumulate(const float* values, const std::int64_t* index, std::int64_t n, std::int64_t slots,
                              float* out, void* stream);
int launch_busy_work(std::int64_t iterations, std::int64_t keep_at, std::int64_t* out, void* stream);

}  // namespace repro_audit
