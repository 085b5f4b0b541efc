// self.index_add_(0, index, source) with many duplicate indices.
// CUDA adds with atomicAdd; deterministic algorithms switch to a sorted, ordered kernel.
// The CPU kernel walks the index serially per slice, so it is deterministic.
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = dtype_of_variant(context.variant());
  const std::int64_t rows = 256, columns = 64, updates = 1 << 16;
  const auto base = context.to_device(at::zeros({rows, columns}, at::TensorOptions().dtype(dtype)));
  const auto index = context.randint(rows, {updates});
  const auto source = context.randn({updates, columns}, dtype);
  return [=] { return Outputs{{"output", base.index_add(0, index, source)}}; };
}

const bool registered = register_probe({
    {"index_add",
     "index_add along dim 0: 65536 rows of 64 into 256 rows",
     {variant("f32", "float32"), variant("f64", "float64"), variant("f16", "float16"), variant("bf16", "bfloat16")},
     {{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}}},
    prepare,
});

}  // namespace
}  // namespace repro_audit
