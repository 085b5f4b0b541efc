// Batch invariance of the matrix products: one request's row of x @ w (and of addmm, bmm and the
// input gradient of linear) against the same row computed alone. A BLAS picks its kernel and
// blocking by the number of rows, so a row's bits can depend on how many other rows share the call.
#include "probe/invariance.h"

namespace repro_audit::batch_linear_probe {
namespace {

constexpr std::int64_t kWidth = 1024;  // K = N

// f32 gets every batch size; bf16 and f16 stop at 257 rows (no fast kernels on many CPUs).
std::vector<std::int64_t> sizes_for(at::ScalarType dtype) {
  return dtype == at::kFloat ? default_batch_sizes() : batch_sizes_up_to(257);
}

RunFunction prepare_mm(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = sizes_for(dtype);
  const auto w = context.input("w", context.randn({kWidth, kWidth}, dtype));
  const auto anchor = context.input("anchor", context.randn({1, kWidth}, dtype));
  const auto fillers = context.input("fillers", context.randn({sizes.back() - 1, kWidth}, dtype));
  return batch_invariance(
      {anchor}, {fillers}, [w](const std::vector<at::Tensor>& x) { return at::mm(x[0], w); }, sizes);
}

RunFunction prepare_addmm(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = sizes_for(dtype);
  const auto w = context.input("w", context.randn({kWidth, kWidth}, dtype));
  const auto bias = context.input("bias", context.randn({kWidth}, dtype));
  const auto anchor = context.input("anchor", context.randn({1, kWidth}, dtype));
  const auto fillers = context.input("fillers", context.randn({sizes.back() - 1, kWidth}, dtype));
  return batch_invariance(
      {anchor}, {fillers}, [w, bias](const std::vector<at::Tensor>& x) { return at::addmm(bias, x[0], w); }, sizes);
}

// d(linear(x))/dx for an upstream gradient per row: grad_out @ W, one request's row of it.
RunFunction prepare_linear_backward(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = sizes_for(dtype);
  const auto w = context.input("w", context.randn({kWidth, kWidth}, dtype));
  const auto bias = context.input("bias", context.randn({kWidth}, dtype));
  const auto x_anchor = context.input("x_anchor", context.randn({1, kWidth}, dtype));
  const auto x_fillers = context.input("x_fillers", context.randn({sizes.back() - 1, kWidth}, dtype));
  const auto g_anchor = context.input("g_anchor", context.randn({1, kWidth}, dtype));
  const auto g_fillers = context.input("g_fillers", context.randn({sizes.back() - 1, kWidth}, dtype));
  return batch_invariance(
      {x_anchor, g_anchor}, {x_fillers, g_fillers},
      [w, bias](const std::vector<at::Tensor>& inputs) {
        const auto x = requiring_grad(inputs[0]);
        return gradient(at::linear(x, w, bias), x, inputs[1]);
      },
      sizes);
}

// bmm over a batch of 64 x 64 products: one batch entry alone against inside the batch.
RunFunction prepare_bmm(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = batch_sizes_up_to(dtype == at::kFloat ? 1024 : 257);
  const std::int64_t m = 64;
  const auto a_anchor = context.input("a_anchor", context.randn({1, m, m}, dtype));
  const auto a_fillers = context.input("a_fillers", context.randn({sizes.back() - 1, m, m}, dtype));
  const auto b_anchor = context.input("b_anchor", context.randn({1, m, m}, dtype));
  const auto b_fillers = context.input("b_fillers", context.randn({sizes.back() - 1, m, m}, dtype));
  return batch_invariance(
      {a_anchor, b_anchor}, {a_fillers, b_fillers},
      [](const std::vector<at::Tensor>& x) { return at::bmm(x[0], x[1]); }, sizes);
}

const bool registered =
    register_probe(invariance_probe("batch.mm",
                                    "one row of x @ w (K = N = 1024) alone and in batches of up to 1024 rows",
                                    Invariance::batch, prepare_mm)
                       .python("return batch_invariance([anchor], [fillers], lambda x: torch.mm(x[0], w), "
                               "default_batch_sizes() if dtype == torch.float32 else batch_sizes_up_to(257))")
                       .documented_as_cublas_product()) &&
    register_probe(invariance_probe("batch.addmm", "one row of bias + x @ w (K = N = 1024) alone and in batches",
                                    Invariance::batch, prepare_addmm)
                       .python("return batch_invariance([anchor], [fillers], lambda x: torch.addmm(bias, x[0], w), "
                               "default_batch_sizes() if dtype == torch.float32 else batch_sizes_up_to(257))")
                       .documented_as_cublas_product()) &&
    register_probe(invariance_probe("batch.linear_backward",
                                    "one row of the input gradient of linear (1024 x 1024) alone and in batches",
                                    Invariance::batch, prepare_linear_backward)
                       .python(R"(
                           def backward(inputs):
                               x = inputs[0].detach().requires_grad_()
                               return gradient(F.linear(x, w, bias), x, inputs[1])
                           sizes = default_batch_sizes() if dtype == torch.float32 else batch_sizes_up_to(257)
                           return batch_invariance([x_anchor, g_anchor], [x_fillers, g_fillers], backward, sizes)
                       )")
                       .documented_as_cublas_product()) &&
    register_probe(
        invariance_probe("batch.bmm", "one 64 x 64 product of bmm alone and in batches", Invariance::batch, prepare_bmm)
            .python("return batch_invariance([a_anchor, b_anchor], [a_fillers, b_fillers], lambda x: torch.bmm(x[0], "
                    "x[1]), batch_sizes_up_to(1024 if dtype == torch.float32 else 257))")
            .documented_as_cublas_product());

}  // namespace
}  // namespace repro_audit::batch_linear_probe
