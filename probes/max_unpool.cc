// MaxUnpool1d/2d/3d with indices that collide (each output plane is written from 16 times as many
// inputs as it has distinct targets): with duplicates the last write wins. torch.use_deterministic_algorithms
// lists MaxUnpool1d/2d/3d as raising on every device (every release from 2.4 to 2.15): ATen alerts in
// both the CPU and the CUDA kernels. The CPU kernel writes each plane serially; CUDA's threads race.
#include "probe/probe.h"

namespace repro_audit::max_unpool_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& dims = context.parameter("dims");
  // CUDA: more planes, the same collisions per target. Unverified on a GPU.
  const std::int64_t batch = context.on_cuda() ? 32 : 2, channels = 8;
  // Input planes of 64 (1d), 16x16 (2d), 4x4x4 (3d); output planes twice as long per side; the
  // indices aim at a sixteenth of the output plane.
  const std::vector<std::int64_t> extent = dims == "1d"   ? std::vector<std::int64_t>{64}
                                           : dims == "2d" ? std::vector<std::int64_t>{16, 16}
                                                          : std::vector<std::int64_t>{4, 4, 4};
  std::vector<std::int64_t> shape = {batch, channels}, output_size;
  std::int64_t plane = 1;
  for (const auto size : extent) {
    shape.push_back(size);
    output_size.push_back(2 * size);
    plane *= 2 * size;
  }
  const auto input = context.input("input", context.randn(shape, dtype));
  const auto indices = context.input("indices", context.randint(plane / 16, shape));
  return [=] {
    if (dims == "1d")
      return Outputs{
          {"output", at::max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), {output_size[0], 1}).squeeze(-1)}};
    if (dims == "2d") return Outputs{{"output", at::max_unpool2d(input, indices, output_size)}};
    return Outputs{{"output", at::max_unpool3d(input, indices, output_size, {2, 2, 2}, {0, 0, 0})}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("max_unpool")
        .describe("MaxUnpool forward, colliding indices: 1d 2x8x64, 2d 2x8x16x16, 3d 2x8x4x4x4, kernel 2")
        .variant(Variant("1d-f32", "MaxUnpool1d")
                     .dtype(DType::f32)
                     .parameter("dims", "1d")
                     .default_suite_on(
                         {"cuda"}, "2d-f32 covers the CPU's kernel (1d is 2d's): run it here with --probe max_unpool"))
        .variant(Variant("2d-f32", "MaxUnpool2d").dtype(DType::f32).parameter("dims", "2d"))
        .variant(Variant("3d-f32", "MaxUnpool3d")
                     .dtype(DType::f32)
                     .parameter("dims", "3d")
                     .default_suite_on({"cuda"}, "2d-f32 covers the CPU's alert: run it here with --probe max_unpool"))
        .documented({{"cpu", Documented::raises_under_strict}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked("a write, not a sum: which colliding input lands is the order of the writes, "
                                "which no input of the probe sets")
        .prepare(prepare)
        .python(R"(
                           unpool = {"1d": F.max_unpool1d, "2d": F.max_unpool2d, "3d": F.max_unpool3d}[dims]
                           size = [2 * s for s in input.shape[2:]]
                           return {"output": unpool(input, indices, 2, output_size=size)}
                       )"));

}  // namespace
}  // namespace repro_audit::max_unpool_probe
