// bincount with weights: 2^20 values into 1024 bins. CUDA accumulates the weights with atomicAdd
// and raises under deterministic algorithms; the CPU kernel is serial.
#include "probe/probe.h"

namespace repro_audit::bincount_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t bins = 1024, n = 1 << 20;
  const auto input = context.input("input", context.randint(bins, {n}));
  const auto weights = context.input("weights", context.randn({n}, dtype));
  return [=] { return Outputs{{"output", at::bincount(input, weights, bins)}}; };
}

const bool registered =
    register_probe(ProbeBuilder("bincount")
                       .describe("bincount with weights: 2^20 values into 1024 bins")
                       .variant(Variant(DType::f32, "float32 weights"))
                       .variant(Variant(DType::f64, "float64 weights"))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
                       .accumulates("output", "weights")
                       .prepare(prepare)
                       .python(R"(return {"output": torch.bincount(input, weights, minlength=1024)})"));

}  // namespace
}  // namespace repro_audit::bincount_probe
