// self.scatter_add_(0, index, src) with many duplicate indices.
// CUDA adds with atomicAdd; deterministic algorithms switch implementation. The CPU kernel
// reduces each output slice serially, so it is deterministic.
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = dtype_of_variant(context.variant());
  const std::int64_t slots = 512, updates = 1 << 20;
  const auto base = context.to_device(at::zeros({slots}, at::TensorOptions().dtype(dtype)));
  const auto index = context.randint(slots, {updates});
  const auto source = context.randn({updates}, dtype);
  return [=] { return Outputs{{"output", base.scatter_add(0, index, source)}}; };
}

const bool registered = register_probe({
    {"scatter_add",
     "scatter_add along dim 0: 2^20 values into 512 slots",
     {variant("f32", "float32"), variant("f64", "float64"), variant("f16", "float16"), variant("bf16", "bfloat16")},
     {{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}}},
    prepare,
});

}  // namespace
}  // namespace repro_audit
