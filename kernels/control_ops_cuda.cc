// The control ops on CUDA: ATen's side (checks, outputs, the current stream, registration) around the
// kernels in control_kernels.cu.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "accumulate.h"
#include "control_kernels.h"
#include "control_ops.h"

namespace repro_audit {
namespace {

void check_launch(int code) { C10_CUDA_CHECK(static_cast<cudaError_t>(code)); }

void* current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

at::Tensor busy_work_cuda(const at::Tensor& like, std::int64_t iterations, std::int64_t keep_at) {
  const c10::cuda::CUDAGuard guard(like.device());
  auto output = at::empty({1}, like.options().dtype(at::kLong));
  check_launch(launch_busy_work(iterations, keep_at, output.data_ptr<std::int64_t>(), current_stream()));
  return output;
}

at::Tensor racy_accumulate_cuda(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  const c10::cuda::CUDAGuard guard(values.device());
  return accumulate(values, index, slots,
                    [](float* out, const float* in, const std::int64_t* positions, std::int64_t n) {
                      check_launch(launch_racy_accumulate(in, positions, n, out, current_stream()));
                    });
}

at::Tensor ordered_accumulate_cuda(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  const c10::cuda::CUDAGuard guard(values.device());
  return accumulate(values, index, slots,
                    [slots](float* out, const float* in, const std::int64_t* positions, std::int64_t n) {
                      check_launch(launch_ordered_accumulate(in, positions, n, slots, out, current_stream()));
                    });
}

}  // namespace

TORCH_LIBRARY_IMPL(control, CUDA, m) {
  m.impl("racy_accumulate", racy_accumulate_cuda);
  m.impl("ordered_accumulate", ordered_accumulate_cuda);
  m.impl("busy_work", busy_work_cuda);
}

}  // namespace repro_audit
