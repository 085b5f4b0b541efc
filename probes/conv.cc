// conv2d forward and backward. On CUDA, cuDNN picks an algorithm per shape (timed when
// cudnn.benchmark is on, so the pick can differ between processes) and some algorithms reduce
// with atomics; deterministic algorithms or cudnn.deterministic restrict the choice.
#include <torch/csrc/autograd/autograd.h>

#include "probe/probe.h"

namespace repro_audit::conv_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto input = context.input("input", requiring_grad(context.randn({8, 32, 32, 32}, dtype)));
  const auto weight = context.input("weight", requiring_grad(context.randn({64, 32, 3, 3}, dtype) * 0.1));
  const auto grad_output = context.input("grad_output", context.randn({8, 64, 32, 32}, dtype));
  return [=] {
    const auto output = at::conv2d(input, weight, {}, /*stride=*/1, /*padding=*/1);
    const auto grads = torch::autograd::grad({output}, {input, weight}, {grad_output});
    return Outputs{{"output", output.detach()}, {"grad_input", grads[0]}, {"grad_weight", grads[1]}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("conv")
        .weight(8)
        .describe("conv2d 3x3, 8x32x32x32 to 64 channels, forward and backward")
        .variant(Variant(DType::f32))
        .variant(Variant(DType::f64).weight(23))
        .variant(Variant(DType::bf16))
        .variant(
            Variant(DType::f16).cuda_only("float16 convolution is slow and seldom used on the CPU; audited on CUDA"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
        .accumulates("grad_weight", "grad_output")
        .prepare(prepare)
        .python(R"(
            input.requires_grad_()
            weight.requires_grad_()
            output = F.conv2d(input, weight, None, stride=1, padding=1)
            grad_input, grad_weight = torch.autograd.grad([output], [input, weight], [grad_output])
            return {"output": output.detach(), "grad_input": grad_input, "grad_weight": grad_weight}
        )"));

}  // namespace
}  // namespace repro_audit::conv_probe
