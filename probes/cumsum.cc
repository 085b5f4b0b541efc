// cumsum of 2^22 values. CUDA's floating-point cumsum switches to a deterministic kernel under
// deterministic algorithms (recent releases; older ones raised). The CPU scan is serial.
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = dtype_of_variant(context.variant());
  const auto input = context.randn({1 << 22}, dtype);
  return [=] { return Outputs{{"output", input.cumsum(0)}}; };
}

const bool registered = register_probe({
    {"cumsum",
     "cumsum of 2^22 values",
     {variant("f32", "float32"), variant("f64", "float64")},
     {{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}}},
    prepare,
});

}  // namespace
}  // namespace repro_audit
