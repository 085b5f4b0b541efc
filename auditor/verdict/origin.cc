#include "verdict/origin.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace repro_audit {
namespace {

constexpr std::size_t kDownstreamShown = 5;

std::string describe(const OpRecord& op, int position) {
  return op.module.empty() ? fmt::format("#{} {}", position, op.name)
                           : fmt::format("#{} {} ({})", position, op.name, op.module);
}

bool encloses(const std::vector<OpRecord>& ops, int outer, int inner) {
  return ops[outer].start < ops[inner].start && outer > inner;
}

std::string parted_at(const std::vector<OpRecord>& reference, const std::vector<OpRecord>& other,
                      const std::vector<std::pair<int, int>>& matched) {
  int i = 0, j = 0;
  for (const auto& [a, b] : matched) {
    if (a != i || b != j) break;
    ++i, ++j;
  }
  const auto size_a = static_cast<int>(reference.size()), size_b = static_cast<int>(other.size());
  if (i == size_a && j == size_b) return "";
  const auto side = [](const std::vector<OpRecord>& ops, int at) {
    return at < static_cast<int>(ops.size()) ? ops[at].name : std::string("the end");
  };
  return fmt::format("the op sequences part at #{}: {} in one run, {} in the other ({} vs {} ops; {} aligned by name)",
                     i, side(reference, i), side(other, j), size_a, size_b, matched.size());
}

}  // namespace

std::vector<std::pair<int, int>> align_ops(const std::vector<OpRecord>& reference, const std::vector<OpRecord>& other,
                                           std::size_t max_cells) {
  const auto n = reference.size(), m = other.size();
  std::size_t prefix = 0;
  while (prefix < n && prefix < m && reference[prefix].name == other[prefix].name) ++prefix;
  std::size_t suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && reference[n - 1 - suffix].name == other[m - 1 - suffix].name)
    ++suffix;
  std::vector<std::pair<int, int>> matched;
  for (std::size_t i = 0; i < prefix; ++i) matched.emplace_back(static_cast<int>(i), static_cast<int>(i));
  const auto a = n - prefix - suffix, b = m - prefix - suffix;
  if ((a + 1) * (b + 1) > max_cells) {
    // Too long to align exactly: pair the middle by position while the names agree.
    for (std::size_t i = 0; i < std::min(a, b) && reference[prefix + i].name == other[prefix + i].name; ++i)
      matched.emplace_back(static_cast<int>(prefix + i), static_cast<int>(prefix + i));
  } else if (a > 0 && b > 0) {
    // lengths[i][j]: the LCS of the middles' tails from i and j.
    std::vector<std::vector<std::uint32_t>> lengths(a + 1, std::vector<std::uint32_t>(b + 1, 0));
    for (std::size_t i = a; i-- > 0;)
      for (std::size_t j = b; j-- > 0;)
        lengths[i][j] = reference[prefix + i].name == other[prefix + j].name
                            ? lengths[i + 1][j + 1] + 1
                            : std::max(lengths[i + 1][j], lengths[i][j + 1]);
    for (std::size_t i = 0, j = 0; i < a && j < b;) {
      if (reference[prefix + i].name == other[prefix + j].name) {
        matched.emplace_back(static_cast<int>(prefix + i), static_cast<int>(prefix + j));
        ++i, ++j;
      } else if (lengths[i + 1][j] >= lengths[i][j + 1]) {
        ++i;
      } else {
        ++j;
      }
    }
  }
  for (std::size_t k = suffix; k-- > 0;) matched.emplace_back(static_cast<int>(n - 1 - k), static_cast<int>(m - 1 - k));
  return matched;
}

OpComparison compare_op_sequences(const std::vector<OpRecord>& reference, const std::vector<OpRecord>& other) {
  OpComparison comparison;
  comparison.matched = align_ops(reference, other);
  comparison.parted = parted_at(reference, other, comparison.matched);
  const auto differs = [&](int i, int j) {
    return !reference[i].outputs.empty() && !other[j].outputs.empty() && reference[i].outputs != other[j].outputs;
  };
  std::size_t found = comparison.matched.size();
  for (std::size_t k = 0; k < comparison.matched.size(); ++k) {
    const auto [i, j] = comparison.matched[k];
    if (reference[i].inputs == other[j].inputs && differs(i, j)) {
      found = k;
      break;
    }
  }
  if (found == comparison.matched.size()) {
    for (const auto& [i, j] : comparison.matched)
      if (differs(i, j) || reference[i].inputs != other[j].inputs) {
        comparison.no_origin = fmt::format(
            "no recorded op gave different outputs from agreeing inputs; the first difference is in the {} of {}",
            reference[i].inputs != other[j].inputs ? "inputs" : "outputs", describe(reference[i], i));
        break;
      }
    return comparison;
  }
  const auto [at, _] = comparison.matched[found];
  Origin origin;
  origin.position = at;
  origin.ops = static_cast<int>(reference.size());
  origin.op = reference[at].name;
  origin.module = reference[at].module;
  std::vector<std::pair<std::int64_t, std::string>> enclosing;
  for (int r = at + 1; r < static_cast<int>(reference.size()); ++r)
    if (encloses(reference, r, at)) enclosing.emplace_back(reference[r].start, reference[r].name);
  std::sort(enclosing.begin(), enclosing.end());
  for (const auto& [start, name] : enclosing) origin.within.push_back(name);
  for (int r = 0; r < static_cast<int>(reference.size()); ++r)
    if (r == at || (r < at && reference[r].start > reference[at].start))  // the op and the ops inside it
      origin.kernels.insert(origin.kernels.end(), reference[r].kernels.begin(), reference[r].kernels.end());
  for (std::size_t k = found + 1; k < comparison.matched.size(); ++k) {
    const auto [i, j] = comparison.matched[k];
    if (!differs(i, j) || encloses(reference, i, at)) continue;
    ++origin.downstream;
    if (origin.downstream_ops.size() < kDownstreamShown) origin.downstream_ops.push_back(describe(reference[i], i));
  }
  comparison.origin = origin;
  return comparison;
}

std::string describe_origin_op(const Origin& origin) {
  auto chain = origin.within;
  chain.push_back(origin.op);
  const auto ops = fmt::format("{}", fmt::join(chain, " > "));
  return origin.module.empty() ? fmt::format("#{} {} (top level)", origin.position, ops)
                               : fmt::format("#{} {} ({})", origin.position, ops, origin.module);
}

}  // namespace repro_audit
