// grid_sample backward, bilinear, zeros padding, align_corners=False (cuDNN's sampler takes only
// align_corners=True, so CUDA runs ATen's kernel). The output samples the input more densely than its
// own grid, so each input element's gradient sums many samples; CUDA adds them with atomicAdd and
// raises under deterministic algorithms (torch.nn.functional.grid_sample, every release from 2.4 to
// 2.15). The CPU kernel is serial per batch element.
#include "probe/probe.h"

namespace repro_audit::grid_sample_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const bool three_d = context.parameter("dims") == "3d";
  // CUDA: a larger batch, the same density of samples per input element. Unverified on a GPU.
  const std::int64_t batch = context.on_cuda() ? 16 : 2;
  const auto input =
      context.input("input", requiring_grad(context.randn(three_d ? std::vector<std::int64_t>{batch, 4, 8, 8, 8}
                                                                  : std::vector<std::int64_t>{batch, 8, 16, 16},
                                                          dtype)));
  // Sample points in [-1.1, 1.1): a few fall outside and read zeros.
  const auto grid = context.input("grid", context.rand(three_d ? std::vector<std::int64_t>{batch, 16, 16, 16, 3}
                                                               : std::vector<std::int64_t>{batch, 64, 64, 2},
                                                       dtype) *
                                                  2.2 -
                                              1.1);
  const auto op = [=] { return at::grid_sampler(input, grid, /*bilinear*/ 0, /*zeros*/ 0, /*align_corners=*/false); };
  const auto grad_output = context.input("grad_output", context.randn(op().sizes(), dtype));
  return [=] {
    const auto output = op();
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("grid_sample")
        .describe("grid_sample forward and backward, bilinear: 2d 2x8x16x16 at 64x64, 3d 2x4x8x8x8 at 16x16x16")
        .variant(
            Variant("2d-f32", "2d, float32")
                .dtype(DType::f32)
                .parameter("dims", "2d")
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe grid_sample"))
        .variant(
            Variant("2d-f64", "2d, float64")
                .dtype(DType::f64)
                .parameter("dims", "2d")
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe grid_sample"))
        .variant(
            Variant("3d-f32", "3d, float32")
                .dtype(DType::f32)
                .parameter("dims", "3d")
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe grid_sample"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulates("grad_input", "grad_output")
        .prepare(prepare)
        .python(R"(
                           input.requires_grad_()
                           output = F.grid_sample(input, grid, mode="bilinear", padding_mode="zeros",
                                                  align_corners=False)
                           return {"output": output.detach(), "grad_input": gradient(output, input, grad_output)}
                       )"));

}  // namespace
}  // namespace repro_audit::grid_sample_probe
