// x.index_put_({index}, values, accumulate=True) with many duplicate indices.
// CPU: the kernel adds in parallel with atomics, so with 2+ threads the order of the float adds
// (hence the bits) depends on scheduling; deterministic algorithms switch to a sort-based kernel.
// CUDA: the accumulate path always sorts the indices first.
// https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
#include "probe/probe.h"

namespace repro_audit::index_put_accumulate_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t slots = 1024, updates = 1 << 20;
  const auto base = context.input("base", context.to_device(at::zeros({slots}, at::TensorOptions().dtype(dtype))));
  const auto index = context.input("index", context.randint(slots, {updates}));
  const auto values = context.input("values", context.randn({updates}, dtype));
  return [=] {
    auto target = base.clone();
    target.index_put_({index}, values, /*accumulate=*/true);
    return Outputs{{"output", target}};
  };
}

const bool registered =
    register_probe(ProbeBuilder("index_put_accumulate")
                       .weight(4)
                       .describe("index_put_ with accumulate=True: 2^20 values into 1024 slots")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64))
                       .documented({{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::deterministic}})
                       .accumulates("output", "values")
                       .prepare(prepare)
                       .python(R"(
                           target = base.clone()
                           target.index_put_((index,), values, accumulate=True)
                           return {"output": target}
                       )"));

}  // namespace
}  // namespace repro_audit::index_put_accumulate_probe
