// Collectives across ranks (ranks/rank_group.h): all_reduce, reduce_scatter, all_gather and a
// DDP-style bucketed gradient all-reduce. Every rank draws the same 24 contributions, as a global batch
// of 24 examples split across the ranks would give them: rank r of W holds contributions
// [r*24/W, (r+1)*24/W) and sums its share in order before the collective, so a result changes with W
// only through the order of the sums. Without ranks (the sensitivity check, probe/sensitivity.h) a
// probe computes the same result in one process: every contribution summed in order.
#include <fmt/format.h>

#include "probe/probe.h"
#include "ranks/rank_group.h"

namespace repro_audit::collectives_probe {
namespace {

constexpr std::int64_t kContributions = 24;

std::int64_t share_begin(int rank, int size) { return rank * kContributions / size; }

// The rank's contributions summed in order: a local batch's gradient before the all-reduce.
at::Tensor local_sum(const at::Tensor& contributions, int rank, int size) {
  const auto begin = share_begin(rank, size), end = share_begin(rank + 1, size);
  auto sum = contributions[begin].clone();
  for (auto i = begin + 1; i < end; ++i) sum.add_(contributions[i]);
  return sum;
}

int rank_of(const ProbeContext& context) { return context.group() ? context.group()->rank() : 0; }
int size_of(const ProbeContext& context) { return context.group() ? context.group()->size() : 1; }

at::Tensor contributions(ProbeContext& context, std::int64_t elements) {
  return context.input("contributions", context.randn({kContributions, elements}, context.dtype()));
}

std::int64_t elements(const ProbeContext& context) { return std::stoll(context.parameter("elements")); }

void require_blocks(std::int64_t elements, int size) {
  if (elements % size != 0)
    throw Unsupported(fmt::format("{} elements do not split into {} equal blocks", elements, size));
}

RunFunction all_reduce(ProbeContext& context) {
  const auto values = contributions(context, elements(context));
  auto* group = context.group();
  const int rank = rank_of(context), size = size_of(context);
  return [=] {
    auto result = local_sum(values, rank, size);
    if (group) group->all_reduce_sum(result);
    return Outputs{{"result", result}};
  };
}

// Each rank keeps its block of the sum, then every block goes to every rank (an exact copy), so each
// rank holds the whole result.
RunFunction reduce_scatter(ProbeContext& context) {
  const auto values = contributions(context, elements(context));
  auto* group = context.group();
  const int rank = rank_of(context), size = size_of(context);
  require_blocks(values.size(1), size);
  return [=] {
    auto local = local_sum(values, rank, size);
    if (!group) return Outputs{{"result", local}};
    auto block = at::empty({values.size(1) / size}, local.options());
    group->reduce_scatter_sum(block, local);
    std::vector<at::Tensor> blocks;
    for (int r = 0; r < size; ++r) blocks.push_back(at::empty_like(block));
    group->all_gather(blocks, block);
    return Outputs{{"result", at::cat(blocks)}};
  };
}

// A pure copy: each rank's block of one tensor, gathered. Anything but the tensor's own bits is an error.
RunFunction all_gather(ProbeContext& context) {
  const auto whole = context.input("values", context.randn({elements(context)}, context.dtype()));
  auto* group = context.group();
  const int rank = rank_of(context), size = size_of(context);
  require_blocks(whole.numel(), size);
  return [=] {
    if (!group) return Outputs{{"result", whole.clone()}};
    const auto block = whole.chunk(size)[rank].contiguous();
    std::vector<at::Tensor> blocks;
    for (int r = 0; r < size; ++r) blocks.push_back(at::empty_like(block));
    group->all_gather(blocks, block);
    auto result = at::cat(blocks);
    if (!result.equal(whole)) throw std::runtime_error("all_gather returned other bits than the ranks sent");
    return Outputs{{"result", result}};
  };
}

// DistributedDataParallel's gradient reduction: parameters' gradients (each rank's mean over its
// examples) packed in reverse order into buckets of at most 4096 elements, each bucket all-reduced and
// divided by the rank count. With W dividing 24 the local batches are equal and the result is the
// global mean for every W.
RunFunction ddp_buckets(ProbeContext& context) {
  static const std::vector<std::int64_t> parameters = {3000, 64, 2000, 5, 1200, 700, 4096, 1};
  std::int64_t total = 0;
  for (const auto size : parameters) total += size;
  const auto values = contributions(context, total);
  auto* group = context.group();
  const int rank = rank_of(context), size = size_of(context);
  const auto examples = share_begin(rank + 1, size) - share_begin(rank, size);
  constexpr std::int64_t kBucketElements = 4096;
  return [=] {
    const auto gradients = local_sum(values, rank, size).div_(static_cast<double>(examples));
    std::vector<at::Tensor> by_parameter = gradients.split_with_sizes(parameters);
    std::vector<at::Tensor> reduced(by_parameter.size());
    std::vector<std::size_t> bucket;
    std::int64_t filled = 0;
    const auto flush = [&] {
      if (bucket.empty()) return;
      std::vector<at::Tensor> members;
      for (const auto index : bucket) members.push_back(by_parameter[index].flatten());
      auto flat = at::cat(members);
      if (group) group->all_reduce_sum(flat);
      flat.div_(static_cast<double>(size));
      std::int64_t offset = 0;
      for (const auto index : bucket) {
        reduced[index] = flat.narrow(0, offset, by_parameter[index].numel());
        offset += by_parameter[index].numel();
      }
      bucket.clear();
      filled = 0;
    };
    for (auto index = by_parameter.size(); index-- > 0;) {
      if (filled > 0 && filled + by_parameter[index].numel() > kBucketElements) flush();
      bucket.push_back(index);
      filled += by_parameter[index].numel();
    }
    flush();
    return Outputs{{"gradients", at::cat(reduced)}};
  };
}

Variant sized(DType dtype, const std::string& name, std::int64_t elements, const std::string& description) {
  return Variant(name, description).dtype(dtype).parameter("elements", std::to_string(elements));
}

const std::map<std::string, Documented> kDocumented = {{"cpu", Documented::deterministic},
                                                       {"cuda", Documented::deterministic}};
constexpr const char* kNoPython =
    "a collective runs in W cooperating processes; its script would need torch.distributed's launcher";

const bool registered =
    register_probe(
        ProbeBuilder("all_reduce")
            .describe("sum over the ranks of each rank's share of 24 contributions (message sizes 64, 8400 and "
                      "262144 elements)")
            .collective()
            .variant(sized(DType::f32, "f32", 8400, "float32, 8400 elements (33 KB)"))
            .variant(sized(DType::f32, "small-f32", 64, "float32, 64 elements (256 B)"))
            .variant(sized(DType::f32, "large-f32", 262144, "float32, 262144 elements (1 MB)"))
            .variant(sized(DType::f64, "f64", 8400, "float64, 8400 elements"))
            .variant(sized(DType::bf16, "bf16", 8400, "bfloat16, 8400 elements"))
            .variant(sized(DType::f16, "f16", 8400, "float16, 8400 elements"))
            .documented(kDocumented)
            .accumulates("result", "contributions")
            .timeout(120)
            .prepare(all_reduce)
            .no_python(kNoPython)) &&
    register_probe(ProbeBuilder("reduce_scatter")
                       .describe("each rank's block of the sum over the ranks, gathered (8400 elements)")
                       .collective()
                       .variant(sized(DType::f32, "f32", 8400, "float32, 8400 elements"))
                       .documented(kDocumented)
                       .accumulates("result", "contributions")
                       .timeout(120)
                       .prepare(reduce_scatter)
                       .no_python(kNoPython)) &&
    register_probe(ProbeBuilder("all_gather")
                       .describe("each rank's block of one tensor, gathered: a copy that must be exact")
                       .collective()
                       .variant(sized(DType::f32, "f32", 8400, "float32, 8400 elements"))
                       .documented(kDocumented)
                       .timeout(120)
                       .prepare(all_gather)
                       .no_python(kNoPython)) &&
    register_probe(ProbeBuilder("ddp_buckets")
                       .describe("DDP's gradient all-reduce: 8 parameters' mean gradients in buckets of 4096 "
                                 "elements, averaged over the ranks")
                       .collective()
                       .variant(Variant(DType::f32, "float32, 11066 gradient elements"))
                       .documented(kDocumented)
                       .accumulates("gradients", "contributions")
                       .timeout(120)
                       .prepare(ddp_buckets)
                       .no_python(kNoPython));

}  // namespace
}  // namespace repro_audit::collectives_probe
