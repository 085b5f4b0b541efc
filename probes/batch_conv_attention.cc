// Batch invariance of conv2d over the batch dimension, of scaled_dot_product_attention per batch
// entry and per query row, and of embedding_bag per bag.
#include <fmt/format.h>

#include "probe/invariance.h"

namespace repro_audit::batch_conv_attention_probe {
namespace {

// 3 -> 16 channels, 3 x 3 kernel, 32 x 32 images; one image alone and in batches.
RunFunction prepare_conv2d(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = batch_sizes_up_to(dtype == at::kFloat ? 257 : 64);
  const auto weight = context.input("weight", context.randn({16, 3, 3, 3}, dtype));
  const auto anchor = context.input("anchor", context.randn({1, 3, 32, 32}, dtype));
  const auto fillers = context.input("fillers", context.randn({sizes.back() - 1, 3, 32, 32}, dtype));
  return batch_invariance(
      {anchor}, {fillers}, [weight](const std::vector<at::Tensor>& x) { return at::conv2d(x[0], weight, {}, 1, 1); },
      sizes);
}

constexpr std::int64_t kHeads = 4, kLength = 64, kHeadDim = 32;

// One batch entry (its queries, keys and values) alone and among others.
RunFunction prepare_sdpa_batch(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = batch_sizes_up_to(257);
  std::vector<at::Tensor> anchors, fillers;
  for (int i = 0; i < 3; ++i) {
    anchors.push_back(context.input(fmt::format("anchor{}", i), context.randn({1, kHeads, kLength, kHeadDim}, dtype)));
    fillers.push_back(context.input(fmt::format("fillers{}", i),
                                    context.randn({sizes.back() - 1, kHeads, kLength, kHeadDim}, dtype)));
  }
  return batch_invariance(
      anchors, fillers,
      [](const std::vector<at::Tensor>& x) { return at::scaled_dot_product_attention(x[0], x[1], x[2]); }, sizes);
}

// One query row against fixed keys and values, alone and among other queries (dimension 2).
RunFunction prepare_sdpa_query(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = batch_sizes_up_to(1024);
  const auto keys = context.input("keys", context.randn({1, kHeads, kLength, kHeadDim}, dtype));
  const auto values = context.input("values", context.randn({1, kHeads, kLength, kHeadDim}, dtype));
  const auto anchor = context.input("anchor", context.randn({1, kHeads, 1, kHeadDim}, dtype));
  const auto fillers = context.input("fillers", context.randn({1, kHeads, sizes.back() - 1, kHeadDim}, dtype));
  return batch_invariance(
      {anchor}, {fillers},
      [keys, values](const std::vector<at::Tensor>& q) { return at::scaled_dot_product_attention(q[0], keys, values); },
      sizes, /*dim=*/2);
}

// One bag of 16 weighted indices into a 1000 x 64 table (mode=sum), alone and among other bags.
RunFunction prepare_embedding_bag(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = default_batch_sizes();
  const std::int64_t rows = 1000, per_bag = 16;
  const auto weight = context.input("weight", context.randn({rows, 64}, dtype));
  const auto index_anchor = context.input("index_anchor", context.randint(rows, {1, per_bag}));
  const auto index_fillers = context.input("index_fillers", context.randint(rows, {sizes.back() - 1, per_bag}));
  const auto weight_anchor = context.input("weight_anchor", context.rand({1, per_bag}, dtype));
  const auto weight_fillers = context.input("weight_fillers", context.rand({sizes.back() - 1, per_bag}, dtype));
  return batch_invariance(
      {index_anchor, weight_anchor}, {index_fillers, weight_fillers},
      [weight, per_bag](const std::vector<at::Tensor>& bags) {
        const auto count = bags[0].size(0);
        const auto offsets = at::arange(0, count * per_bag, per_bag, bags[0].options());
        return std::get<0>(at::embedding_bag(weight, bags[0].flatten(), offsets, /*scale_grad_by_freq=*/false,
                                             /*mode=*/0, /*sparse=*/false, bags[1].flatten()));
      },
      sizes);
}

const bool registered =
    register_probe(
        invariance_probe("batch.conv2d",
                         "one 3 x 32 x 32 image through a 3 x 3 conv (16 channels), alone and "
                         "in batches",
                         Invariance::batch, prepare_conv2d)
            .python("return batch_invariance([anchor], [fillers], lambda x: F.conv2d(x[0], weight, None, 1, 1), "
                    "batch_sizes_up_to(257 if dtype == torch.float32 else 64))")
            .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})) &&
    register_probe(invariance_probe("batch.sdpa",
                                    "scaled_dot_product_attention of one batch entry (4 heads, 64 x 32) "
                                    "alone and in batches",
                                    Invariance::batch, prepare_sdpa_batch)
                       .python("return batch_invariance([anchor0, anchor1, anchor2], [fillers0, fillers1, fillers2], "
                               "lambda x: F.scaled_dot_product_attention(x[0], x[1], x[2]), batch_sizes_up_to(257))")
                       .documented_as_cublas_product()) &&
    register_probe(invariance_probe("batch.sdpa_query",
                                    "scaled_dot_product_attention of one query row against fixed keys "
                                    "(4 heads, 64 keys), alone and among other queries",
                                    Invariance::batch, prepare_sdpa_query)
                       .python("return batch_invariance([anchor], [fillers], lambda q: F.scaled_dot_product_attention("
                               "q[0], keys, values), batch_sizes_up_to(1024), dim=2)")
                       .documented_as_cublas_product()) &&
    register_probe(invariance_probe("batch.embedding_bag",
                                    "embedding_bag (sum, per-sample weights) of one bag of 16, alone "
                                    "and among other bags",
                                    Invariance::batch, prepare_embedding_bag)
                       .python(R"(
                           def bags(inputs):
                               offsets = torch.arange(0, inputs[0].size(0) * 16, 16, dtype=torch.long, device=device)
                               return F.embedding_bag(inputs[0].flatten(), weight, offsets, mode="sum",
                                                      per_sample_weights=inputs[1].flatten())
                           return batch_invariance([index_anchor, weight_anchor], [index_fillers, weight_fillers],
                                                   bags, default_batch_sizes())
                       )"));

}  // namespace
}  // namespace repro_audit::batch_conv_attention_probe
