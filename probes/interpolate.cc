// interpolate backward, upsampling by 2. On CUDA the backward of linear, bilinear, bicubic and
// trilinear modes scatters with atomicAdd and is documented to raise under deterministic
// algorithms; nearest is not listed. CPU kernels are deterministic.
// Python's F.interpolate does not always reach those kernels: for bilinear and trilinear on a non-CPU
// device under deterministic algorithms it runs torch._decomp's _upsample_linear_vec instead, whose
// backward is index_put with accumulate (deterministic there). The "decomposed" variants run that
// path on every device, op for op; the others run the native kernels, as C++ and TorchScript do.
#include <torch/nn/functional/upsampling.h>

#include "probe/probe.h"

namespace repro_audit::interpolate_probe {
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

// torch._decomp.decompositions._upsample_linear (torch 2.14.1) with align_corners=False and one scale
// per spatial dimension, the same ATen ops in the same order, so autograd builds the graph Python
// builds. @pw_cast_for_opmath: reduced floating types compute in float32.
at::Tensor upsample_linear_decomposed(const at::Tensor& original, double scale) {
  const auto result_dtype = original.scalar_type();
  const bool reduced = result_dtype == at::kBFloat16 || result_dtype == at::kHalf;
  const auto input = reduced ? original.to(at::kFloat) : original;
  const auto dtype = input.scalar_type();
  const auto dims = input.dim() - 2;
  std::vector<at::Tensor> xs_f32, xs, xp1s;
  for (std::int64_t d = 0; d < dims; ++d) {
    const auto in_size = input.size(d + 2);
    const auto out_size = in_size * static_cast<std::int64_t>(scale);
    const auto i = at::arange(out_size, input.options().dtype(at::kLong)).to(dtype);
    std::vector<std::int64_t> shape(static_cast<std::size_t>(dims - d), 1);
    shape[0] = out_size;
    const auto x_f32 = ((i + 0.5) * (1.0 / scale) - 0.5).clamp_min(0.0).reshape(shape);
    const auto x = x_f32.to(at::kLong);
    xs_f32.push_back(x_f32);
    xs.push_back(x);
    xp1s.push_back((x + 1).clamp_max(in_size - 1));
  }
  std::vector<at::Tensor> corners;  // itertools.product([0, 1], repeat=dims): the first dimension varies slowest
  for (std::int64_t a = 0; a < (std::int64_t{1} << dims); ++a) {
    c10::List<std::optional<at::Tensor>> index;
    index.push_back(std::nullopt);
    index.push_back(std::nullopt);
    for (std::int64_t k = 0; k < dims; ++k) index.push_back(((a >> (dims - 1 - k)) & 1) ? xp1s[k] : xs[k]);
    corners.push_back(at::_unsafe_index(input, index));
  }
  for (auto d = dims - 1; d >= 0; --d) {
    const auto weight = (xs_f32[d] - xs[d]).clamp(0.0, 1.0).to(dtype);
    std::vector<at::Tensor> blended;
    for (std::size_t j = 0; j + 1 < corners.size(); j += 2)
      blended.push_back(corners[j] + at::mul(corners[j + 1] - corners[j], weight));
    corners = std::move(blended);
  }
  const auto result = corners.front().contiguous();
  return reduced ? result.to(result_dtype) : result;
}

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
  const auto input = context.input("input", requiring_grad(context.randn(shape, dtype)));
  if (context.parameter("path") == "decomposed") {
    const auto grad_output =
        context.input("grad_output", context.randn(upsample_linear_decomposed(input, 2.0).sizes(), dtype));
    return [=] {
      const auto output = upsample_linear_decomposed(input, 2.0);
      return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
    };
  }
  auto options = F::InterpolateFuncOptions().scale_factor(std::vector<double>(mode.spatial, 2.0)).mode(mode.mode);
  if (mode_name != "nearest") options = options.align_corners(false);
  const auto grad_output = context.input("grad_output", context.randn(F::interpolate(input, options).sizes(), dtype));
  return [=] {
    const auto output = F::interpolate(input, options);
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

// Named "<mode>-<dtype>", e.g. bilinear-f64: the native kernel.
Variant with_mode(const std::string& mode, DType dtype, const std::string& description) {
  return Variant(mode + "-" + to_string(dtype), description)
      .dtype(dtype)
      .parameter("mode", mode)
      .parameter("path", "native");
}

// Named "<mode>-decomposed-<dtype>": Python's deterministic path on a GPU, on every device. Only CUDA's
// default suite runs it: on the CPU no Python user takes it, its ops are the index_put_accumulate
// probe's, and its backward (8 serial index_put accumulations) cost a third of the CPU's default audit.
Variant decomposed(const std::string& mode, DType dtype, const std::string& description) {
  return Variant(mode + "-decomposed-" + to_string(dtype), description)
      .dtype(dtype)
      .parameter("mode", mode)
      .parameter("path", "decomposed")
      .documented({{"cuda", Documented::alternative_under_strict}})
      .default_suite_on({"cuda"}, "Python takes this path only on a GPU; run it here with --probe interpolate");
}

// Python's F.interpolate and the native kernel, for the template below.
constexpr const char* kPython = R"(
    import importlib
    spatial = {"nearest": 2, "linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}[mode]
    scale = [2.0] * spatial
    input.requires_grad_()
    if path == "decomposed":
        decompositions = importlib.import_module("torch._decomp.decompositions")
        output = decompositions._upsample_linear_vec(input, None, False, scale)
    elif mode in ("bilinear", "trilinear") and not input.is_cpu and torch.are_deterministic_algorithms_enabled():
        # F.interpolate would run torch._decomp's path here (the -decomposed- variant); the cell ran the kernel.
        kernel = torch._C._nn.upsample_bilinear2d if mode == "bilinear" else torch._C._nn.upsample_trilinear3d
        output = kernel(input, None, False, scale)
    else:
        output = F.interpolate(input, scale_factor=scale, mode=mode, align_corners=None if mode == "nearest" else False)
    return {"output": output.detach(), "grad_input": gradient(output, input, grad_output)}
)";

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
        .variant(decomposed("bilinear", DType::f32,
                            "bilinear, 2d, as Python runs it on a GPU under deterministic algorithms"))
        .variant(decomposed("trilinear", DType::f32,
                            "trilinear, 3d, as Python runs it on a GPU under deterministic algorithms")
                     .weight(20))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulates("grad_input", "grad_output")
        .prepare(prepare)
        .python(kPython)
        .python_path("F.interpolate runs torch._decomp's _upsample_linear_vec for bilinear on a non-CPU device under "
                     "deterministic algorithms: variant bilinear-decomposed-f32 audits that path",
                     "routes_to('torch._decomp.decompositions', '_upsample_linear_vec', lambda x: F.interpolate(x, "
                     "scale_factor=2.0, mode='bilinear', align_corners=False), (1, 1, 4, 4))")
        .python_path("F.interpolate runs torch._decomp's _upsample_linear_vec for trilinear on a non-CPU device under "
                     "deterministic algorithms: variant trilinear-decomposed-f32 audits that path",
                     "routes_to('torch._decomp.decompositions', '_upsample_linear_vec', lambda x: F.interpolate(x, "
                     "scale_factor=2.0, mode='trilinear', align_corners=False), (1, 1, 2, 4, 4))"));

}  // namespace
}  // namespace repro_audit::interpolate_probe
