// embedding_bag backward: 1024 bags of 32 indices over a 1000 x 64 table.
// CUDA documents mode='max' as raising under deterministic algorithms; sum and mean backward are
// not listed (sorted segment reductions).
#include "probe/probe.h"

namespace repro_audit::embedding_bag_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t rows = 1000, dim = 64, bags = 1024, per_bag = 32;
  const auto weight = context.input("weight", requiring_grad(context.randn({rows, dim}, dtype)));
  const auto indices = context.input("indices", context.randint(rows, {bags * per_bag}));
  const auto offsets = context.input("offsets", context.to_device(at::arange(0, bags * per_bag, per_bag, at::kLong)));
  // at::embedding_bag's modes: 0 sum, 1 mean, 2 max.
  const auto& mode_name = context.parameter("mode");
  const std::int64_t mode = mode_name == "mean" ? 1 : mode_name == "max" ? 2 : 0;
  const auto grad_output = context.input("grad_output", context.randn({bags, dim}, dtype));
  return [=] {
    const auto output = std::get<0>(at::embedding_bag(weight, indices, offsets, /*scale_grad_by_freq=*/false, mode));
    return Outputs{{"output", output.detach()}, {"grad_weight", gradient(output, weight, grad_output)}};
  };
}

const bool registered =
    register_probe(ProbeBuilder("embedding_bag")
                       .weight(3)
                       .describe("embedding_bag forward and backward: 1024 bags of 32 over a 1000 x 64 table")
                       .variant(Variant("sum-f32", "mode=sum, float32").dtype(DType::f32).parameter("mode", "sum"))
                       .variant(Variant("sum-f64", "mode=sum, float64").dtype(DType::f64).parameter("mode", "sum"))
                       .variant(Variant("mean-f32", "mode=mean, float32").dtype(DType::f32).parameter("mode", "mean"))
                       .variant(Variant("max-f32", "mode=max, float32")
                                    .dtype(DType::f32)
                                    .parameter("mode", "max")
                                    .documented({{"cuda", Documented::raises_under_strict}})
                                    // One row per bag and column takes each gradient (the max): few rows
                                    // sum three or more, so any element that changes passes.
                                    .sensitivity_floor(0.0))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
                       .accumulates("grad_weight", "grad_output")
                       .prepare(prepare)
                       .python(R"(
                           weight.requires_grad_()
                           output = F.embedding_bag(indices, weight, offsets, mode=mode)
                           return {"output": output.detach(), "grad_weight": gradient(output, weight, grad_output)}
                       )"));

}  // namespace
}  // namespace repro_audit::embedding_bag_probe
