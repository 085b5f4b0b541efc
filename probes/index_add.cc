// self.index_add_(0, index, source) with many duplicate indices.
// CUDA adds with atomicAdd; deterministic algorithms switch to a sorted, ordered kernel.
// The CPU kernel walks the index serially per slice, so it is deterministic.
#include "probe/probe.h"

namespace repro_audit::index_add_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t rows = 256, columns = 64, updates = 1 << 16;
  const auto base =
      context.input("base", context.to_device(at::zeros({rows, columns}, at::TensorOptions().dtype(dtype))));
  const auto index = context.input("index", context.randint(rows, {updates}));
  const auto source = context.input("source", context.randn({updates, columns}, dtype));
  return [=] { return Outputs{{"output", base.index_add(0, index, source)}}; };
}

const bool registered =
    register_probe(ProbeBuilder("index_add")
                       .weight(2.5)
                       .describe("index_add along dim 0: 65536 rows of 64 into 256 rows")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64).weight(5))
                       .variant(Variant(DType::f16))
                       .variant(Variant(DType::bf16))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                       .accumulates("output", "source")
                       .prepare(prepare)
                       .python(R"(return {"output": base.index_add(0, index, source)})"));

}  // namespace
}  // namespace repro_audit::index_add_probe
