// embedding_bag backward: 1024 bags of 32 indices over a 1000 x 64 table.
// CUDA documents mode='max' as raising under deterministic algorithms; sum and mean backward are
// not listed (sorted segment reductions).
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto& name = context.variant();
  const auto dtype = dtype_of_variant(name);
  const std::int64_t rows = 1000, dim = 64, bags = 1024, per_bag = 32;
  const auto weight = requiring_grad(context.randn({rows, dim}, dtype));
  const auto indices = context.randint(rows, {bags * per_bag});
  const auto offsets = context.to_device(at::arange(0, bags * per_bag, per_bag, at::kLong));
  // at::embedding_bag's modes: 0 sum, 1 mean, 2 max.
  const std::int64_t mode = name.rfind("mean", 0) == 0 ? 1 : name.rfind("max", 0) == 0 ? 2 : 0;
  const auto grad_output = context.randn({bags, dim}, dtype);
  return [=] {
    const auto output = std::get<0>(at::embedding_bag(weight, indices, offsets, /*scale_grad_by_freq=*/false, mode));
    return Outputs{{"output", output.detach()}, {"grad_weight", gradient(output, weight, grad_output)}};
  };
}

const std::map<std::string, Documented> kMaxRaises = {{"cuda", Documented::raises_under_strict}};

const bool registered = register_probe({
    {"embedding_bag",
     "embedding_bag forward and backward: 1024 bags of 32 over a 1000 x 64 table",
     {variant("sum-f32", "mode=sum, float32"), variant("sum-f64", "mode=sum, float64"),
      variant("mean-f32", "mode=mean, float32"), variant("max-f32", "mode=max, float32", kMaxRaises)},
     {{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}}},
    prepare,
});

}  // namespace
}  // namespace repro_audit
