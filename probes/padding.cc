// Reflection and replication padding backward, 1d, 2d and 3d. The CUDA backward kernels add each padded
// gradient back into the input element it copies with atomicAdd (a border element receives many), and
// ATen raises for both under deterministic algorithms (alertNotDeterministic in ReflectionPad.cu and
// ReplicationPadding.cu). torch.use_deterministic_algorithms lists ReflectionPad1d/2d/3d among the ops
// that raise, and ReplicationPad1d/2d/3d among those with a deterministic implementation: that one is
// Python's. F.pad(mode="replicate") on CUDA under deterministic algorithms runs
// torch._decomp.decompositions._replication_pad, whose backward is index_put with accumulate. The
// "-decomposed" variants run that path op for op; the others run ATen's kernel, as C++ and TorchScript
// do. Every CPU kernel is deterministic.
#include "probe/probe.h"

namespace repro_audit::padding_probe {
namespace {

// The pad width on each side: a border element of the replication pad receives (width + 1)^dims
// gradients; the reflection pad, nearly as wide as the input, sends up to 3^dims to one element.
std::int64_t width_of(int dims) { return dims == 1 ? 48 : dims == 2 ? 24 : 8; }

std::vector<std::int64_t> shape_of(int dims, bool on_cuda) {
  // CUDA: more planes at the same width, the same collisions per element, more of them in flight.
  // Unverified on a GPU.
  const std::int64_t batch = on_cuda ? 8 : 1;
  if (dims == 1) return {8 * batch, 16, 64};
  if (dims == 2) return {4 * batch, 8, 32, 32};
  return {2 * batch, 4, 12, 12, 12};
}

// torch._decomp.decompositions._replication_pad (torch 2.14.1), the same ATen ops in the same order.
at::Tensor replication_pad_decomposed(const at::Tensor& input, const std::vector<std::int64_t>& pad) {
  const auto dims = static_cast<std::int64_t>(pad.size() / 2);
  const auto batch_dims = input.dim() - dims;
  auto result = input;
  for (std::int64_t i = 0; i < dims; ++i) {
    const auto left = pad[static_cast<std::size_t>(2 * (dims - 1 - i))];
    const auto right = pad[static_cast<std::size_t>(2 * (dims - 1 - i) + 1)];
    const auto middle = input.size(batch_dims + i);
    const auto index = at::arange(-left, middle + right, input.options().dtype(at::kLong)).clamp(0, middle - 1);
    c10::List<std::optional<at::Tensor>> indices;
    for (std::int64_t d = 0; d < result.dim(); ++d)
      indices.push_back(d == batch_dims + i ? std::optional<at::Tensor>(index) : std::nullopt);
    result = at::_unsafe_index(result, indices);
  }
  return result.contiguous();
}

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& mode = context.parameter("mode");
  const int dims = context.parameter("dims")[0] - '0';
  const bool decomposed = context.parameter("path") == "decomposed";
  const std::vector<std::int64_t> pad(static_cast<std::size_t>(2 * dims), width_of(dims));
  const auto input = context.input("input", requiring_grad(context.randn(shape_of(dims, context.on_cuda()), dtype)));
  const auto op = [=] { return decomposed ? replication_pad_decomposed(input, pad) : at::pad(input, pad, mode); };
  const auto grad_output = context.input("grad_output", context.randn(op().sizes(), dtype));
  return [=] {
    const auto output = op();
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

// torch._C._nn.pad is where F.pad ends when it does not take the decomposition: the native kernels.
constexpr const char* kPython = R"(
    import importlib
    width = {"1": 48, "2": 24, "3": 8}[dims[0]]
    pad = (width,) * (2 * int(dims[0]))
    input.requires_grad_()
    if path == "decomposed":
        output = importlib.import_module("torch._decomp.decompositions")._replication_pad(input, pad)
    else:
        output = torch._C._nn.pad(input, pad, mode)
    return {"output": output.detach(), "grad_input": gradient(output, input, grad_output)}
)";

const std::map<std::string, Documented> kAlternative = {{"cuda", Documented::alternative_under_strict}};

// Named "<mode><dims>-<dtype>", e.g. reflect2d-f32.
Variant padded(const std::string& mode, const std::string& dims, const std::string& description) {
  return Variant(mode + dims + "-f32", description)
      .dtype(DType::f32)
      .parameter("mode", mode)
      .parameter("dims", dims)
      .parameter("path", "native")
      .default_suite_on({"cuda"},
                        "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe padding");
}

// Named "replicate<dims>-decomposed-f32": Python's deterministic path on a GPU, on every device.
Variant decomposed(const std::string& dims, const std::string& description) {
  auto variant =
      Variant("replicate" + dims + "-decomposed-f32", description)
          .dtype(DType::f32)
          .parameter("mode", "replicate")
          .parameter("dims", dims)
          .parameter("path", "decomposed")
          .documented(kAlternative)
          .default_suite_on({"cuda"}, "Python takes this path only on a GPU; run it here with --probe padding");
  if (dims != "2d")
    variant.documented_before(
        "2.8", "cuda", Documented::raises_under_strict,
        "torch.use_deterministic_algorithms lists ReplicationPad1d and ReplicationPad3d "
        "among the ops that raise up to 2.7 and among those with a deterministic "
        "implementation from 2.8 (pytorch#148633, merged after 2.7's branch cut; ReplicationPad2d since 2.2, "
        "pytorch#111590)");
  return variant;
}

const bool registered = register_probe(
    ProbeBuilder("padding")
        .weight(1.5)
        .describe("reflection and replication padding backward: 1d 8x16x64 by 48, 2d 4x8x32x32 by 24, "
                  "3d 2x4x12x12x12 by 8")
        .variant(padded("reflect", "1d", "ReflectionPad1d"))
        .variant(padded("reflect", "2d", "ReflectionPad2d"))
        .variant(padded("reflect", "3d", "ReflectionPad3d").weight(4))
        .variant(padded("replicate", "1d", "ReplicationPad1d, ATen's kernel"))
        .variant(padded("replicate", "2d", "ReplicationPad2d, ATen's kernel"))
        .variant(padded("replicate", "3d", "ReplicationPad3d, ATen's kernel").weight(4))
        .variant(decomposed("1d", "ReplicationPad1d as Python runs it on a GPU under deterministic algorithms"))
        .variant(decomposed("2d", "ReplicationPad2d as Python runs it on a GPU under deterministic algorithms"))
        .variant(
            decomposed("3d", "ReplicationPad3d as Python runs it on a GPU under deterministic algorithms").weight(6))
        // ATen's CUDA kernels raise for both modes (the documented alternative of replicate is Python's).
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        // Only border elements (replicate) or elements reached by both reflections sum three or more
        // gradients: a small share of the input. Any element that changes passes.
        .accumulates("grad_input", "grad_output", 0.0)
        .prepare(prepare)
        .python(kPython)
        .python_path("F.pad(mode='replicate') runs torch._decomp's _replication_pad on CUDA under deterministic "
                     "algorithms: the replicate*-decomposed-f32 variants audit that path",
                     "routes_to('torch._decomp.decompositions', '_replication_pad', lambda x: F.pad(x, (2, 2), "
                     "mode='replicate'), (1, 1, 4), device='cuda')"));

}  // namespace
}  // namespace repro_audit::padding_probe
