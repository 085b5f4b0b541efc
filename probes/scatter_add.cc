// self.scatter_add_(0, index, src) with many duplicate indices.
// CUDA adds with atomicAdd; deterministic algorithms switch implementation. The CPU kernel
// reduces each output slice serially, so it is deterministic.
#include "probe/probe.h"

namespace repro_audit::scatter_add_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t slots = 512, updates = 1 << 20;
  const auto base = context.input("base", context.to_device(at::zeros({slots}, at::TensorOptions().dtype(dtype))));
  const auto index = context.input("index", context.randint(slots, {updates}));
  const auto source = context.input("source", context.randn({updates}, dtype));
  return [=] { return Outputs{{"output", base.scatter_add(0, index, source)}}; };
}

const bool registered =
    register_probe(ProbeBuilder("scatter_add")
                       .weight(0.7)
                       .describe("scatter_add along dim 0: 2^20 values into 512 slots")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64))
                       .variant(Variant(DType::f16))
                       .variant(Variant(DType::bf16))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                       .accumulates("output", "source")
                       .prepare(prepare)
                       .python(R"(return {"output": base.scatter_add(0, index, source)})")
                       .python_path("in Python on CUDA with nvidia-cutlass-dsl installed, torch._native registers a "
                                    "CuTeDSL kernel (atomicAdd; declined under deterministic algorithms) for "
                                    "aten::scatter_add; libtorch has none: this probe and repro.py "
                                    "(TORCH_DISABLE_NATIVE_JIT=1) run ATen's",
                                    "native_override('scatter_add')"));

}  // namespace
}  // namespace repro_audit::scatter_add_probe
