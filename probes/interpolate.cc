// interpolate backward, upsampling by 2. On CUDA the backward of linear, bilinear, bicubic and
// trilinear modes scatters with atomicAdd and is documented to raise under deterministic
// algorithms; nearest is not listed. CPU kernels are deterministic.
#include "worker/probe.h"

namespace repro_audit {
namespace {

namespace F = torch::nn::functional;

struct Mode {
  const char* name;
  F::InterpolateFuncOptions::mode_t mode;
  int spatial;  // 1d, 2d or 3d input
};

const std::vector<Mode> kModes = {
    {"nearest", torch::kNearest, 2}, {"linear", torch::kLinear, 1},       {"bilinear", torch::kBilinear, 2},
    {"bicubic", torch::kBicubic, 2}, {"trilinear", torch::kTrilinear, 3},
};

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& mode_name = context.parameter("mode");
  const auto found = std::find_if(kModes.begin(), kModes.end(), [&](const Mode& m) { return mode_name == m.name; });
  if (found == kModes.end()) throw std::invalid_argument("interpolate: unknown mode '" + mode_name + "'");
  const auto& mode = *found;
  std::vector<std::int64_t> shape = {4, 16};
  const std::vector<std::int64_t> extent = mode.spatial == 1   ? std::vector<std::int64_t>{4096}
                                           : mode.spatial == 2 ? std::vector<std::int64_t>{48, 48}
                                                               : std::vector<std::int64_t>{12, 16, 16};
  shape.insert(shape.end(), extent.begin(), extent.end());
  const auto input = requiring_grad(context.randn(shape, dtype));
  auto options = F::InterpolateFuncOptions().scale_factor(std::vector<double>(mode.spatial, 2.0)).mode(mode.mode);
  if (mode_name != "nearest") options = options.align_corners(false);
  const auto grad_output = context.randn(F::interpolate(input, options).sizes(), dtype);
  return [=] {
    const auto output = F::interpolate(input, options);
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

// Named "<mode>-<dtype>", e.g. bilinear-f64.
Variant with_mode(const std::string& mode, DType dtype, const std::string& description) {
  return Variant(mode + "-" + to_string(dtype), description).dtype(dtype).parameter("mode", mode);
}

const bool registered = register_probe(
    ProbeBuilder("interpolate")
        .weight(2)
        .describe("interpolate forward and backward, scale 2: 1d 4x16x4096, 2d 4x16x48x48, 3d 4x16x12x16x16")
        .variant(with_mode("nearest", DType::f32, "nearest, 2d").documented({{"cuda", Documented::deterministic}}))
        .variant(with_mode("linear", DType::f32, "linear, 1d"))
        .variant(with_mode("bilinear", DType::f32, "bilinear, 2d"))
        .variant(with_mode("bilinear", DType::f64, "bilinear, 2d, float64"))
        .variant(with_mode("bilinear", DType::bf16, "bilinear, 2d, bfloat16"))
        .variant(with_mode("bicubic", DType::f32, "bicubic, 2d").weight(12))
        .variant(with_mode("trilinear", DType::f32, "trilinear, 3d").weight(13))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .prepare(prepare));

}  // namespace
}  // namespace repro_audit
