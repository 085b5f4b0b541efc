// cumsum of 2^22 values. CUDA's floating-point cumsum switches to a deterministic kernel under
// deterministic algorithms (recent releases; older ones raised). The CPU scan is serial.
#include "probe/probe.h"

namespace repro_audit::cumsum_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto input = context.input("input", context.randn({1 << 22}, dtype));
  return [=] { return Outputs{{"output", input.cumsum(0)}}; };
}

const bool registered =
    register_probe(ProbeBuilder("cumsum")
                       .weight(4)
                       .describe("cumsum of 2^22 values")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64).weight(17))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                       .documented_before("2.14", "cuda", Documented::raises_under_strict,
                                          "torch.use_deterministic_algorithms lists floating-point cumsum on CUDA "
                                          "among the ops that raise up to 2.13 (its deterministic kernel came in "
                                          "2.6, pytorch#136224), among those with a deterministic implementation "
                                          "from 2.14 (pytorch#190975)")
                       .accumulates("output", "input")
                       .prepare(prepare)
                       .python(R"(return {"output": input.cumsum(0)})"));

}  // namespace
}  // namespace repro_audit::cumsum_probe
