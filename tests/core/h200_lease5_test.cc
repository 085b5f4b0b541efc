// What the fifth GPU lease (an H200, torch 2.11.0+cu130, cuDNN 9.19, driver 580.159.04, 2026-11-30) measured,
// kept as fixtures (tests/core/fixtures/h200-torch-2.11.0-*-2026-11-30*.json.gz, written by tools/gpu-proof
// and tools/gpu-lease, machine paths removed) and held here without a GPU: the default CUDA audit with the
// attention backward cut to one dtype per backend and mask (345 cells in 66.5 s, against 417 in 85.4 s), every
// warn-only fused attention cell hearing its warning now that workers ask libtorch for every warning, and the
// one same-kernel pair whose costs disagreed inside the audit agreeing when its probe was audited alone.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "h200_audit.h"
#include "report/same_kernel_costs.h"
#include "timing/timing.h"

namespace repro_audit {
namespace {

const Report& fifth_lease_audit() {
  return testing::gpu_audit_once("h200-torch-2.11.0-default-audit-2026-11-30.json.gz");
}

// 115 variants under default, strict and strict-warn; the verdicts as the audit printed them.
TEST(H200Lease5, TheDefaultAuditsCellsAndVerdicts) {
  const auto& audit = fifth_lease_audit();
  EXPECT_EQ(audit.cells.size(), 345u);
  std::map<VerdictKind, int> verdicts;
  for (const auto& cell : audit.cells) ++verdicts[cell.verdict.kind];
  EXPECT_EQ(verdicts[VerdictKind::deterministic], 174);
  EXPECT_EQ(verdicts[VerdictKind::nondeterministic], 76);
  EXPECT_EQ(verdicts[VerdictKind::warns], 47);
  EXPECT_EQ(verdicts[VerdictKind::raises], 39);
  EXPECT_EQ(verdicts[VerdictKind::unsupported], 9);
}

// The CUDA default suite keeps 12 of the attention backward's 36 variants. The fourth lease ran 14 strict-warn
// cells side by side that said `warns` only where they were a worker's first to hear libtorch's once-per-process
// warning; one worker at a time and asking for every warning, each fused kernel's strict-warn cell warns where it
// runs (the math backward is deterministic; the flash kernel takes no mask on this build).
TEST(H200Lease5, EveryWarnOnlyFusedAttentionCellWarned) {
  std::set<std::string> variants;
  int warned = 0;
  for (const auto& cell : fifth_lease_audit().cells) {
    if (cell.cell.probe != "sdpa_backward") continue;
    variants.insert(cell.cell.variant);
    if (cell.cell.label != "strict-warn") continue;
    const auto& variant = cell.cell.variant;
    if (variant.rfind("math", 0) == 0)
      EXPECT_EQ(cell.verdict.kind, VerdictKind::deterministic) << cell.cell.key;
    else if (variant == "flash-mask-bf16")
      EXPECT_EQ(cell.verdict.kind, VerdictKind::unsupported) << cell.cell.key;
    else
      warned += cell.verdict.kind == VerdictKind::warns;
  }
  EXPECT_EQ(variants.size(), 12u);
  EXPECT_EQ(warned, 8);  // 3 cuDNN, 3 memory-efficient, 2 flash
}

// Inside the audit, strict's empty-f32 took 7.78 us in all three timing rounds and strict-warn's 7.33 us for the
// same fill kernel (6.08x, interval 5.93-6.10x, against 5.73x, 5.54-5.73x); the probe audited alone, twice, gave
// both 7.36 us and 7.30 us. What the worker ran before a microsecond-scale cell moved its time, not the switch.
TEST(H200Lease5, OnePairDisagreedInTheAuditAndItsCellsAgreedAlone) {
  std::set<std::string> disagreeing;
  const auto pairs = same_kernel_pairs(fifth_lease_audit());
  EXPECT_EQ(pairs.size(), 64u);
  for (const auto& pair : pairs)
    if (!pair.agree()) disagreeing.insert(pair.first.substr(0, pair.first.find('@')));
  EXPECT_EQ(disagreeing, std::set<std::string>{"fill_uninitialized/empty-f32"});
  for (const auto* fixture : {"h200-torch-2.11.0-fill-mv-alone-2026-11-30.json.gz",
                              "h200-torch-2.11.0-fill-mv-alone-2026-11-30-again.json.gz"}) {
    SCOPED_TRACE(fixture);
    const auto alone = testing::gpu_audit(fixture);
    bool fill = false;
    for (const auto& pair : same_kernel_pairs(alone)) {
      EXPECT_TRUE(pair.agree()) << pair.first << " " << cost_detail(pair.first_cost) << " against "
                                << cost_detail(pair.second_cost);
      fill = fill || pair.first.rfind("fill_uninitialized/empty-f32@", 0) == 0;
    }
    EXPECT_TRUE(fill);
  }
}

}  // namespace
}  // namespace repro_audit
