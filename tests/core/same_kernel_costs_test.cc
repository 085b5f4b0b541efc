// The A/A check inside a report: flag sets that ran the same kernels must cost the same.
#include "report/same_kernel_costs.h"

#include <gtest/gtest.h>

#include <set>

#include "h200_audit.h"

namespace repro_audit {
namespace {

// The H100's default CUDA audit: strict and strict-warn ran the same kernels for 37 ops, and 5 of
// their cost intervals did not overlap (sum/f32 0.99x against 0.48x, ...): the later timing rounds'
// fresh workers timed the hosts' launching, not the kernels. What the gpu tier asserts never happens.
TEST(SameKernelCosts, FindsThePairsWhoseCostsMeasuredTheTimer) {
  const auto pairs = same_kernel_pairs(testing::h100_audit());
  EXPECT_EQ(pairs.size(), 37u);
  std::set<std::string> disagreeing;
  for (const auto& pair : pairs) {
    EXPECT_EQ(pair.first.substr(0, pair.first.find('|')), pair.second.substr(0, pair.second.find('|')));
    if (!pair.agree()) disagreeing.insert(pair.first.substr(0, pair.first.find('@')));
  }
  EXPECT_EQ(disagreeing, (std::set<std::string>{"matmul/bf16", "matmul/f16", "matmul/f64", "sum/f32", "sum/rows-f32"}));
}

TEST(SameKernelCosts, PairsOnlyDeterministicCellsWithTheSameKernels) {
  auto report = testing::h100_audit();
  const auto before = same_kernel_pairs(report).size();
  ASSERT_GT(before, 0u);
  // One cell of a pair launched one more kernel: that pair is gone, the others stay.
  const auto key = same_kernel_pairs(report).front().first;
  for (auto& cell : report.cells)
    if (cell.cell.key == key)
      cell.observations.front().kernel_sequences.front().second.push_back({"extra", "", "", -1});
  EXPECT_EQ(same_kernel_pairs(report).size(), before - 1);
  for (auto& cell : report.cells)
    if (cell.verdict.kind == VerdictKind::deterministic) cell.verdict.kind = VerdictKind::nondeterministic;
  EXPECT_TRUE(same_kernel_pairs(report).empty());
}

}  // namespace
}  // namespace repro_audit
