// NLLLoss forward on 4-d input (nll_loss2d), mean reduction. CUDA's forward kernel sums each block's
// terms and adds the blocks' partial sums into the loss with atomicAdd, and raises under deterministic
// algorithms ("nll_loss2d_forward_out_cuda_template", listed as torch.nn.NLLLoss on CUDA in every release
// from 2.4 to 2.15). The CPU kernel sums in a fixed order.
#include "probe/probe.h"

namespace repro_audit::nll_loss2d_probe {

namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  // CUDA: many blocks, hence many partial sums racing into one scalar. Unverified on a GPU.
  const std::int64_t batch = context.on_cuda() ? 64 : 4, classes = 10, side = context.on_cuda() ? 128 : 64;
  // Log-probabilities drawn directly (negative, not normalised: nll_loss takes any values), from (-1, 0]:
  // terms of one magnitude, whose sum rounds differently in another order (spread exponents would let a
  // few large terms decide every bit).
  const auto input = context.input("input", context.rand({batch, classes, side, side}, dtype).neg());
  const auto target = context.input("target", context.randint(classes, {batch, side, side}));
  return [=] { return Outputs{{"loss", at::nll_loss2d(input, target)}}; };
}

const bool registered = register_probe(
    ProbeBuilder("nll_loss2d")
        .describe("NLLLoss forward, mean over 4x64x64 pixels of 10 classes")
        .variant(Variant(DType::f32)
                     .default_suite_on(
                         {"cuda"},
                         "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe nll_loss2d"))
        .variant(Variant(DType::f64)
                     .default_suite_on(
                         {"cuda"},
                         "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe nll_loss2d"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulates("loss", "input")
        .prepare(prepare)
        .python(R"(return {"loss": F.nll_loss(input, target)})"));

}  // namespace
}  // namespace repro_audit::nll_loss2d_probe
