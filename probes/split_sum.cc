// Split-size sweep: a sum over K elements against the same elements zero-padded (one zero, and up
// to the next power of two above K) and summed in chunks (two halves, pieces of 256). "Does padding
// a sequence change my logits": a reduction's bits can depend on its length, not only its values.
#include <fmt/format.h>

#include "probe/invariance.h"

namespace repro_audit::split_sum_probe {
namespace {

std::int64_t next_power_of_two_above(std::int64_t k) {
  std::int64_t power = 1;
  while (power <= k) power *= 2;
  return power;
}

at::Tensor chunked_sum(const at::Tensor& x, std::int64_t chunk) {
  std::vector<at::Tensor> parts;
  for (const auto& piece : x.split(chunk)) parts.push_back(piece.sum());
  return at::stack(parts).sum();
}

RunFunction prepare(ProbeContext& context) {
  const auto k = std::stoll(context.parameter("k"));
  const auto x = context.input("x", context.randn({k}, context.dtype()));
  const auto padded_to = next_power_of_two_above(k);
  const auto one_zero = at::cat({x, at::zeros({1}, x.options())});
  const auto to_power = at::cat({x, at::zeros({padded_to - k}, x.options())});
  const auto padded_name = fmt::format("zero-padded-to-{}", padded_to);
  return [=] {
    return Outputs{{kReferenceOutput, x.sum()},
                   {"zero-padded+1", one_zero.sum()},
                   {padded_name, to_power.sum()},
                   {"in-2-chunks", chunked_sum(x, (k + 1) / 2)},
                   {"in-chunks-of-256", chunked_sum(x, 256)}};
  };
}

Variant length(std::int64_t k, DType dtype) {
  return Variant(fmt::format("k{}-{}", k, to_string(dtype)), fmt::format("K = {}, {}", k, to_string(dtype)))
      .dtype(dtype)
      .parameter("k", std::to_string(k));
}

ProbeBuilder split_probe() {
  auto builder = ProbeBuilder("split.sum")
                     .describe("a sum over K elements against zero-padded and chunked sums of the same elements")
                     .invariance(Invariance::split);
  for (const auto dtype : {DType::f32, DType::bf16})
    for (const std::int64_t k : {1024, 1025, 4096, 65537}) builder.variant(length(k, dtype));
  return builder.prepare(prepare).python(R"(
      padded_to = 1
      while padded_to <= x.numel():
          padded_to *= 2
      def chunked(chunk):
          return torch.stack([piece.sum() for piece in x.split(chunk)]).sum()
      zero = torch.zeros(1, dtype=x.dtype, device=x.device)
      return {"reference": x.sum(), "zero-padded+1": torch.cat([x, zero]).sum(),
              f"zero-padded-to-{padded_to}": torch.cat([x, zero.expand(padded_to - x.numel())]).sum(),
              "in-2-chunks": chunked((x.numel() + 1) // 2), "in-chunks-of-256": chunked(256)}
  )");
}

const bool registered = register_probe(split_probe());

}  // namespace
}  // namespace repro_audit::split_sum_probe
