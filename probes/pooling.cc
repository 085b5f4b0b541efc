// Pooling backward, 2d and 3d. On CUDA, backward kernels that scatter gradients with atomicAdd are
// documented to raise under deterministic algorithms (AvgPool3d, AdaptiveAvgPool2d/3d,
// AdaptiveMaxPool2d, FractionalMaxPool2d/3d); MaxPool3d switches to a deterministic kernel; the
// others gather and are not listed. Every CPU kernel is deterministic.
#include "probe/probe.h"

namespace repro_audit::pooling_probe {
namespace {

// "8x16x16" -> {8, 16, 16}
std::vector<std::int64_t> sizes_of(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('x', start);
    sizes.push_back(std::stoll(text.substr(start, end - start)));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return sizes;
}

at::Tensor pool(const std::string& kind, const at::Tensor& x, bool three_d, const at::Tensor& samples,
                const std::vector<std::int64_t>& fractional_size) {
  if (kind == "max")
    return three_d ? at::max_pool3d(x, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}) : at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
  if (kind == "avg")
    return three_d ? at::avg_pool3d(x, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}) : at::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1});
  if (kind == "adaptive_avg")
    return three_d ? at::adaptive_avg_pool3d(x, {5, 7, 7}) : at::adaptive_avg_pool2d(x, {13, 13});
  if (kind == "adaptive_max")
    return std::get<0>(three_d ? at::adaptive_max_pool3d(x, {5, 7, 7}) : at::adaptive_max_pool2d(x, {13, 13}));
  // fractional_max: fixed random samples, so every run pools the same regions.
  return std::get<0>(three_d ? at::fractional_max_pool3d(x, {2, 2, 2}, fractional_size, samples)
                             : at::fractional_max_pool2d(x, {2, 2}, fractional_size, samples));
}

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& kind = context.parameter("pool");
  const bool three_d = context.parameter("dims") == "3d";
  const auto fractional_size =
      kind == "fractional_max" ? sizes_of(context.parameter("size")) : std::vector<std::int64_t>{};
  // Overlapping windows (kernel 3, stride 2) make several outputs share an input element.
  // A variant may size its input for CUDA apart: the shape that makes its atomic kernel race often.
  const auto shape = context.on_cuda() ? context.parameter_or("cuda_input", "") : std::string();
  const auto input = context.input("input", requiring_grad(!shape.empty() ? context.randn(sizes_of(shape), dtype)
                                                           : three_d      ? context.randn({2, 8, 12, 24, 24}, dtype)
                                                                          : context.randn({4, 16, 64, 64}, dtype)));
  const auto samples = context.input("samples", context.rand({input.size(0), input.size(1), three_d ? 3 : 2}, dtype));
  const auto grad_output =
      context.input("grad_output", context.randn(pool(kind, input, three_d, samples, fractional_size).sizes(), dtype));
  return [=] {
    const auto output = pool(kind, input, three_d, samples, fractional_size);
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

// The same pools as Python spells them.
constexpr const char* kPython = R"(
    three = dims == "3d"
    input.requires_grad_()
    if pool == "max":
        output = F.max_pool3d(input, 3, 2, 1) if three else F.max_pool2d(input, 3, 2, 1)
    elif pool == "avg":
        output = F.avg_pool3d(input, 3, 2, 1) if three else F.avg_pool2d(input, 3, 2, 1)
    elif pool == "adaptive_avg":
        output = F.adaptive_avg_pool3d(input, (5, 7, 7)) if three else F.adaptive_avg_pool2d(input, (13, 13))
    elif pool == "adaptive_max":
        output = F.adaptive_max_pool3d(input, (5, 7, 7)) if three else F.adaptive_max_pool2d(input, (13, 13))
    elif three:
        output = F.fractional_max_pool3d(input, 2, output_size=tuple(int(s) for s in size.split("x")),
                                         _random_samples=samples)
    else:
        output = F.fractional_max_pool2d(input, 2, output_size=tuple(int(s) for s in size.split("x")),
                                         _random_samples=samples)
    return {"output": output.detach(), "grad_input": gradient(output, input, grad_output)}
)";

const std::map<std::string, Documented> kRaises = {{"cuda", Documented::raises_under_strict}};
const std::map<std::string, Documented> kAlternative = {{"cuda", Documented::alternative_under_strict}};

// Named "<pool><dims>-<dtype>", e.g. adaptive_avg3d-f32.
Variant pooled(const std::string& pool, const std::string& dims, DType dtype, const std::string& description,
               std::map<std::string, Documented> documented = {}) {
  return Variant(pool + dims + "-" + to_string(dtype), description)
      .dtype(dtype)
      .parameter("pool", pool)
      .parameter("dims", dims)
      .documented(std::move(documented));
}

const bool registered = register_probe(
    ProbeBuilder("pooling")
        .describe("pooling forward and backward: 2d on 4x16x64x64, 3d on 2x8x12x24x24")
        .variant(pooled("max", "2d", DType::f32, "MaxPool2d 3/2"))
        .variant(pooled("max", "2d", DType::f64, "MaxPool2d 3/2, float64"))
        .variant(pooled("avg", "2d", DType::f32, "AvgPool2d 3/2"))
        .variant(pooled("avg", "2d", DType::bf16, "AvgPool2d 3/2, bfloat16"))
        // 4x16x64x64 -> 13x13 ran CUDA's atomic backward kernel 22 times on an H200 without a divergence
        // (its own repro.py saw 2 results in 22 runs); 8x16x67x67 -> 13x13 gave 7 results in 10 runs there.
        .variant(pooled("adaptive_avg", "2d", DType::f32, "AdaptiveAvgPool2d to 13x13 (CUDA: from 8x16x67x67)", kRaises)
                     .parameter("cuda_input", "8x16x67x67"))
        .variant(pooled("adaptive_max", "2d", DType::f32, "AdaptiveMaxPool2d to 13x13", kRaises))
        .variant(pooled("fractional_max", "2d", DType::f32, "FractionalMaxPool2d 2 to 40x40", kRaises)
                     .parameter("size", "40x40"))
        .variant(pooled("max", "3d", DType::f32, "MaxPool3d 3/2", kAlternative)
                     .documented_before("2.13", "cuda", Documented::raises_under_strict,
                                        "torch.use_deterministic_algorithms lists MaxPool3d's CUDA backward among the "
                                        "ops that raise up to 2.12, among those with a deterministic implementation "
                                        "from 2.13"))
        .variant(pooled("avg", "3d", DType::f32, "AvgPool3d 3/2", kRaises))
        .variant(pooled("adaptive_avg", "3d", DType::f32, "AdaptiveAvgPool3d to 5x7x7", kRaises))
        .variant(pooled("adaptive_max", "3d", DType::f32, "AdaptiveMaxPool3d to 5x7x7"))
        .variant(pooled("fractional_max", "3d", DType::f32, "FractionalMaxPool3d 2 to 6x12x12", kRaises)
                     .parameter("size", "6x12x12")
                     .insensitive_by_design(
                         "from 12x24x24 to 6x12x12 its windows of 2 never overlap (the ratio is exactly 2): no input "
                         "element receives two gradients, so there is no order to race; fractional_max3d-overlap-f32 "
                         "checks the op"))
        .variant(Variant("fractional_max3d-overlap-f32", "FractionalMaxPool3d 2 to 8x16x16: overlapping windows")
                     .dtype(DType::f32)
                     .parameter("pool", "fractional_max")
                     .parameter("dims", "3d")
                     .parameter("size", "8x16x16")
                     .documented(kRaises))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        // A pool's gradient reaches an input element from a few windows at most, and only an element
        // reached from three or more can change with the order (a sum of two is the same either way):
        // by the windows' shape a small share of the elements. Any element that changes passes.
        .accumulates("grad_input", "grad_output", 0.0)
        .prepare(prepare)
        .python(kPython)
        .python_path("F.max_pool3d(..., return_indices=True) on CUDA under deterministic algorithms runs "
                     "torch._decomp's max_pool3d_with_indices; max3d calls max_pool3d without indices, "
                     "the native kernel Python reaches too",
                     "routes_to('torch._decomp.decompositions', 'max_pool3d_with_indices', lambda x: "
                     "F.max_pool3d(x, 3, 2, 1, return_indices=True), (1, 1, 4, 4, 4), device='cuda') "
                     "and not routes_to('torch._decomp.decompositions', 'max_pool3d_with_indices', "
                     "lambda x: F.max_pool3d(x, 3, 2, 1), (1, 1, 4, 4, 4), device='cuda')"));

}  // namespace
}  // namespace repro_audit::pooling_probe
