// Layout invariance: the same values as contiguous, transposed storage, a strided slice of a larger
// tensor, a storage offset of one element and (conv) channels_last, through mm, conv2d, sum and
// softmax. Kernels take other paths for other strides; whether the bits follow is what this measures.
#include "probe/invariance.h"

namespace repro_audit::layout_probe {
namespace {

RunFunction prepare_mm(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto a = context.input("a", context.randn({256, 512}, dtype));
  const auto b = context.input("b", context.randn({512, 256}, dtype));
  return layout_invariance(a, [b](const at::Tensor& x) { return at::mm(x, b); });
}

RunFunction prepare_conv2d(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto input = context.input("input", context.randn({8, 3, 32, 32}, dtype));
  const auto weight = context.input("weight", context.randn({16, 3, 3, 3}, dtype));
  return layout_invariance(
      input, [weight](const at::Tensor& x) { return at::conv2d(x, weight, {}, 1, 1); }, /*channels_last=*/true);
}

RunFunction prepare_sum(ProbeContext& context) {
  const auto input = context.input("input", context.randn({64, 4096}, context.dtype()));
  return layout_invariance(input, [](const at::Tensor& x) { return x.sum(-1); });
}

RunFunction prepare_softmax(ProbeContext& context) {
  const auto input = context.input("input", context.randn({64, 4096}, context.dtype()));
  return layout_invariance(input, [](const at::Tensor& x) { return at::softmax(x, -1); });
}

const bool registered =
    register_probe(invariance_probe("layout.mm", "256 x 512 @ 512 x 256 with the left operand in other layouts",
                                    Invariance::layout, prepare_mm)
                       .python("return layout_invariance(a, lambda x: torch.mm(x, b))")
                       .documented_as_cublas_product()) &&
    register_probe(
        invariance_probe("layout.conv2d",
                         "8 x 3 x 32 x 32 through a 3 x 3 conv, input in other layouts "
                         "(channels_last too)",
                         Invariance::layout, prepare_conv2d)
            .python("return layout_invariance(input, lambda x: F.conv2d(x, weight, None, 1, 1), channels_last=True)")
            .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})) &&
    register_probe(
        invariance_probe("layout.sum", "row sums of 64 x 4096 in other layouts", Invariance::layout, prepare_sum)
            .python("return layout_invariance(input, lambda x: x.sum(-1))")) &&
    register_probe(invariance_probe("layout.softmax", "row softmax of 64 x 4096 in other layouts", Invariance::layout,
                                    prepare_softmax)
                       .python("return layout_invariance(input, lambda x: torch.softmax(x, -1))"));

}  // namespace
}  // namespace repro_audit::layout_probe
