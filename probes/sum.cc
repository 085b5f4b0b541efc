// sum of 2^22 floats. Deterministic for a fixed thread count, but the intra-op thread count
// decides how the reduction is split, so 1 and 2 threads give different bits.
#include "probe/probe.h"

namespace repro_audit::sum_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const bool by_row = context.parameter("over") == "rows";
  const auto input =
      context.input("input", by_row ? context.randn({64, 1 << 16}, dtype) : context.randn({1 << 22}, dtype));
  return [=] { return Outputs{{"output", by_row ? input.sum(1) : input.sum()}}; };
}

const bool registered = register_probe(
    ProbeBuilder("sum")
        .weight(0.5)
        .describe("sum of 2^22 values (all, or 64 rows of 65536)")
        .variant(Variant(DType::f32, "float32, whole tensor").parameter("over", "all"))
        .variant(Variant(DType::f64, "float64, whole tensor").parameter("over", "all"))
        .variant(Variant("rows-f32", "float32, per row").dtype(DType::f32).parameter("over", "rows"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .accumulates("output", "input")
        .prepare(prepare)
        .python(R"(return {"output": input.sum(1) if over == "rows" else input.sum()})")
        .python_path("in Python on CUDA with PYTORCH_SUM_INNER_TREE set and nvidia-cutlass-dsl "
                     "installed, torch._native's CuTeDSL kernel replaces aten::sum over a dimension; "
                     "libtorch has none: this probe and repro.py (TORCH_DISABLE_NATIVE_JIT=1) run ATen's",
                     "native_override('sum.dim_IntList')"));

}  // namespace
}  // namespace repro_audit::sum_probe
