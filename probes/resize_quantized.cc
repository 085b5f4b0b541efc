// resize_ of a quantized tensor, grown from 1024 to 4096 elements (CPU: quantized tensors have no CUDA
// kernels here). The new elements are whatever the allocator hands back, and
// torch.use_deterministic_algorithms lists Tensor.resize_ of a quantized tensor as raising (every
// release from 2.4 to 2.15; quantized_resize_cpu_ alerts).
#include "probe/probe.h"

namespace repro_audit::resize_quantized_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  if (context.on_cuda()) throw Unsupported("quantized tensors are resized on the CPU only");
  const auto input = context.input("input", context.randn({1024}, context.dtype()));
  const auto quantized = at::quantize_per_tensor(input, 0.0625, 0, at::kQInt8);
  return [=] {
    auto grown = quantized.clone();
    grown.resize_({4096});
    return Outputs{{"output", grown.dequantize()}};
  };
}

const bool registered =
    register_probe(ProbeBuilder("resize_quantized")
                       .describe("resize_ of a qint8 tensor from 1024 to 4096 elements, dequantized")
                       .variant(Variant(DType::f32))
                       .documented({{"cpu", Documented::raises_under_strict}})
                       .prepare(prepare)
                       .python(R"(
                           grown = torch.quantize_per_tensor(input, 0.0625, 0, torch.qint8).clone()
                           grown.resize_(4096)
                           return {"output": grown.dequantize()}
                       )"));

}  // namespace
}  // namespace repro_audit::resize_quantized_probe
