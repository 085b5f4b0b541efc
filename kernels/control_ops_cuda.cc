// The control ops on CUDA: ATen's side (checks, outputs, the current stream, registration) around the
// kernels in control_kernels.cu.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

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

void check_inputs(const at::Tensor& values, const at::Tensor& index) {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == at::kFloat, "values must be a 1-d float32 tensor");
  TORCH_CHECK(index.dim() == 1 && index.scalar_type() == at::kLong && index.numel() == values.numel(),
              "index must be a 1-d int64 tensor as long as values");
}

// Both accumulations: the inputs checked and made contiguous, `slots` zeroed sums, then `launch`ed on
// the current stream with (values, index, n, output).
template <typename Launch>
at::Tensor accumulate_cuda(const at::Tensor& values_in, const at::Tensor& index_in, std::int64_t slots, Launch launch) {
  check_inputs(values_in, index_in);
  const c10::cuda::CUDAGuard guard(values_in.device());
  const auto values = values_in.contiguous();
  const auto index = index_in.contiguous();
  auto output = at::zeros({slots}, values.options());
  check_launch(
      launch(values.data_ptr<float>(), index.data_ptr<std::int64_t>(), values.numel(), output.data_ptr<float>()));
  return output;
}

at::Tensor racy_accumulate_cuda(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  return accumulate_cuda(values, index, slots,
                         [](const float* in, const std::int64_t* positions, std::int64_t n, float* out) {
                           return launch_racy_accumulate(in, positions, n, out, current_stream());
                         });
}

at::Tensor ordered_accumulate_cuda(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  return accumulate_cuda(values, index, slots,
                         [slots](const float* in, const std::int64_t* positions, std::int64_t n, float* out) {
                           return launch_ordered_accumulate(in, positions, n, slots, out, current_stream());
                         });
}

}  // namespace

TORCH_LIBRARY_IMPL(control, CUDA, m) {
  m.impl("racy_accumulate", racy_accumulate_cuda);
  m.impl("ordered_accumulate", ordered_accumulate_cuda);
  m.impl("busy_work", busy_work_cuda);
}

}  // namespace repro_audit
