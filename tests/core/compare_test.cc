#include "compare/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sample_reports.h"

namespace repro_audit {
namespace {

using testing::cell;
using testing::report_of;
using testing::timing;

const std::string kColumn = "default threads=1";

CellReport deterministic(const std::string& digest, const Timing& time = timing(1000000, 950000, 1050000)) {
  return cell("sum", "f32", kColumn, VerdictKind::deterministic, digest, time);
}

CellReport with_kind(VerdictKind kind, const std::string& message = "") {
  auto result = cell("sum", "f32", kColumn, kind, "", timing(1000000, 950000, 1050000));
  result.verdict.message = message;
  return result;
}

Comparison compare_reports(const Report& before, const Report& after, double threshold = 0.10) {
  return compare_snapshots(baseline_from_report(before, "before.yaml"), baseline_from_report(after, "after.json"),
                           {threshold});
}

CellComparison compare_one(const CellReport& before, const CellReport& after) {
  const auto comparison = compare_reports(report_of({before}), report_of({after}));
  EXPECT_EQ(comparison.cells.size(), 1u);
  return comparison.cells.at(0);
}

std::vector<Change> classes(const CellReport& before, const CellReport& after) {
  return compare_one(before, after).changes;
}

TEST(Compare, NamesRoundTrip) {
  for (auto change : all_changes()) EXPECT_EQ(change_from_string(to_string(change)), change);
  EXPECT_EQ(to_string(Change::new_nondeterminism), std::string("NEW-NONDETERMINISM"));
  EXPECT_EQ(to_string(Change::added), std::string("NEW"));
  EXPECT_FALSE(change_from_string("new"));
}

TEST(Compare, IdenticalCellIsSame) {
  const auto result = compare_one(deterministic("d1"), deterministic("d1"));
  EXPECT_EQ(result.changes, std::vector<Change>{Change::same});
  EXPECT_EQ(result.detail, "");
}

TEST(Compare, DeterministicBothTimesWithAnotherDigestIsDrift) {
  const auto result = compare_one(deterministic("d1aaaaaaaaaaaaaaaa"), deterministic("d2bbbbbbbbbbbbbbbb"));
  EXPECT_EQ(result.changes, std::vector<Change>{Change::drift});
  EXPECT_EQ(result.detail, "digest d1aaaaaaaaaa -> d2bbbbbbbbbb");
}

TEST(Compare, WarnOnlyCellsWithAgreeingDigestsCanDrift) {
  auto before = deterministic("d1"), after = deterministic("d2");
  before.verdict.kind = after.verdict.kind = VerdictKind::warns;
  EXPECT_EQ(classes(before, after), std::vector<Change>{Change::drift});
}

TEST(Compare, NondeterministicNowIsNewNondeterminism) {
  EXPECT_EQ(classes(deterministic("d1"), with_kind(VerdictKind::nondeterministic)),
            std::vector<Change>{Change::new_nondeterminism});
  auto warned = with_kind(VerdictKind::warns);  // warn-only, digests disagree
  EXPECT_EQ(classes(with_kind(VerdictKind::raises), warned), std::vector<Change>{Change::new_nondeterminism});
}

TEST(Compare, NondeterministicBothTimesIsSame) {
  // Expected divergence (e.g. index_put_ under the default profile) must not trip the gate twice.
  EXPECT_EQ(classes(with_kind(VerdictKind::nondeterministic), with_kind(VerdictKind::nondeterministic)),
            std::vector<Change>{Change::same});
}

TEST(Compare, DeterministicOrRaisingNowAfterFailingIsFixed) {
  EXPECT_EQ(classes(with_kind(VerdictKind::nondeterministic), deterministic("d1")), std::vector<Change>{Change::fixed});
  EXPECT_EQ(classes(with_kind(VerdictKind::crashed), deterministic("d1")), std::vector<Change>{Change::fixed});
  const auto result = compare_one(with_kind(VerdictKind::nondeterministic), with_kind(VerdictKind::raises, "refused"));
  EXPECT_EQ(result.changes, std::vector<Change>{Change::fixed});
  EXPECT_EQ(result.detail, "verdict nondeterministic -> raises (refused)");
}

TEST(Compare, ErrorCrashOrTimeoutNowIsBroke) {
  for (auto kind : {VerdictKind::error, VerdictKind::crashed, VerdictKind::timeout}) {
    const auto result = compare_one(deterministic("d1"), with_kind(kind, "SIGKILL"));
    EXPECT_EQ(result.changes, std::vector<Change>{Change::broke}) << to_string(kind);
    EXPECT_EQ(result.detail, fmt::format("verdict deterministic -> {} (SIGKILL)", to_string(kind)));
  }
  // Broken both times: known, not news.
  EXPECT_EQ(classes(with_kind(VerdictKind::crashed), with_kind(VerdictKind::timeout)),
            std::vector<Change>{Change::same});
}

TEST(Compare, OtherVerdictChangesAreSameWithTheChangeInTheDetail) {
  const auto result = compare_one(deterministic("d1"), with_kind(VerdictKind::unsupported));
  EXPECT_EQ(result.changes, std::vector<Change>{Change::same});
  EXPECT_EQ(result.detail, "verdict deterministic -> unsupported");
}

TEST(Compare, AnotherKernelSequenceOrVaryingSelectionIsKernelsChanged) {
  auto before = deterministic("d1"), after = deterministic("d1");
  before.verdict.kernel_digest = "k1";
  after.verdict.kernel_digest = "k2";
  EXPECT_EQ(classes(before, after), std::vector<Change>{Change::kernels_changed});
  after.verdict.kernel_digest = "";
  after.verdict.kernels_varied = true;
  const auto result = compare_one(before, after);
  EXPECT_EQ(result.changes, std::vector<Change>{Change::kernels_changed});
  EXPECT_EQ(result.detail, "kernel selection now varies between runs");
  // Untraced on one side: nothing to compare.
  after.verdict.kernels_varied = false;
  EXPECT_EQ(classes(before, after), std::vector<Change>{Change::same});
}

TEST(Compare, KernelChangesAreSaidByNameWhenBothSidesKeptTheRecords) {
  auto before = deterministic("d1"), after = deterministic("d1");
  testing::set_kernels(before, std::string(32, 'a'), testing::mkl_sgemm_kernels(false));
  testing::set_kernels(after, std::string(32, 'b'), testing::mkl_sgemm_kernels(true));
  const auto result = compare_one(before, after);
  EXPECT_EQ(result.changes, std::vector<Change>{Change::kernels_changed});
  EXPECT_EQ(result.detail, "MKL code path AVX2 -> AVX-512 (DL Boost)");
  ASSERT_EQ(result.kernel_changes.size(), 1u);
  EXPECT_EQ(result.kernel_changes[0].library, "MKL");
  EXPECT_EQ(result.kernel_changes[0].before, "AVX2");
  EXPECT_EQ(result.kernel_changes[0].after, "AVX-512 (DL Boost)");
  // The same kernels, and no change to describe.
  EXPECT_TRUE(compare_one(before, before).kernel_changes.empty());
}

TEST(Compare, AKernelChangeWithoutNamesOnOneSideKeepsTheDigestsAndSaysWhichSide) {
  auto named = deterministic("d1"), unnamed = deterministic("d1");
  testing::set_kernels(named, std::string(32, 'a'), testing::mkl_sgemm_kernels(false));
  unnamed.verdict.kernel_digest = std::string(32, 'b');  // traced, its records not kept
  auto result = compare_one(unnamed, named);
  EXPECT_EQ(result.changes, std::vector<Change>{Change::kernels_changed});
  EXPECT_EQ(result.detail, "kernels bbbbbbbbbbbb -> aaaaaaaaaaaa (names not recorded in before.yaml)");
  EXPECT_TRUE(result.kernel_changes.empty());
  EXPECT_EQ(compare_one(named, unnamed).detail,
            "kernels aaaaaaaaaaaa -> bbbbbbbbbbbb (names not recorded in after.json)");
}

TEST(Compare, ADetailNamesTheFirstThreeKernelChangesAndCountsTheRest) {
  auto before = deterministic("d1"), after = deterministic("d1");
  std::vector<std::string> old_names = testing::onednn_convolution_kernels(false), new_names = old_names;
  for (const auto* kind : {"reorder", "matmul", "pooling", "eltwise"}) {
    old_names.push_back(std::string("onednn:") + kind + " jit:uni src:f32 dst:f32 8x32");
    new_names.push_back(std::string("onednn:") + kind + " ref:any src:f32 dst:f32 8x32");
  }
  testing::set_kernels(before, std::string(32, 'a'), old_names);
  testing::set_kernels(after, std::string(32, 'b'), new_names);
  const auto result = compare_one(before, after);
  EXPECT_EQ(result.kernel_changes.size(), 4u);
  EXPECT_EQ(result.detail,
            "oneDNN reorder jit:uni -> ref:any; oneDNN matmul jit:uni -> ref:any; oneDNN pooling jit:uni -> ref:any; "
            "1 more kernel change");
}

TEST(Compare, SlowerNeedsBothTheThresholdAndTheSpread) {
  const auto before = deterministic("d1", timing(1000000, 950000, 1050000));
  // +50%, clear of the old spread.
  const auto slower = compare_one(before, deterministic("d1", timing(1500000, 1400000, 1600000)));
  EXPECT_EQ(slower.changes, std::vector<Change>{Change::slower});
  EXPECT_EQ(slower.detail, "median 1.00 ms -> 1.50 ms (+50%; p10-p90 950 µs-1.05 ms -> 1.40 ms-1.60 ms)");
  // +50% median but a wide spread that overlaps the old p90: noise, not a regression.
  EXPECT_EQ(classes(before, deterministic("d1", timing(1500000, 1000000, 2000000))), std::vector<Change>{Change::same});
  // Clear of the spread but within the 10% threshold.
  EXPECT_EQ(classes(deterministic("d1", timing(1000000, 999000, 1001000)),
                    deterministic("d1", timing(1080000, 1079000, 1081000))),
            std::vector<Change>{Change::same});
  // No timing on one side.
  EXPECT_EQ(classes(before, deterministic("d1", Timing{})), std::vector<Change>{Change::same});
}

TEST(Compare, SlowerNeedsTheWholeSpreadBeyondTheThreshold) {
  const auto before = deterministic("d1", timing(1000000, 950000, 1050000));
  // +20% median, the new p10 only 5% above the old p90: drift between audits, not a regression.
  EXPECT_EQ(classes(before, deterministic("d1", timing(1200000, 1100000, 1300000))), std::vector<Change>{Change::same});
  // Narrow medians' intervals do not make it one: they say nothing of the drift between two audits.
  auto narrow = timing(1200000, 1100000, 1300000);
  narrow.ci_low_ns = 1190000;
  narrow.ci_high_ns = 1210000;
  EXPECT_EQ(classes(before, deterministic("d1", narrow)), std::vector<Change>{Change::same});
  // The new p10 more than 10% above the old p90.
  EXPECT_EQ(classes(before, deterministic("d1", timing(1300000, 1160000, 1400000))),
            std::vector<Change>{Change::slower});
}

TEST(Compare, TimingsOfTwoPlatformsAreComparedOnlyOnRequest) {
  auto before = report_of({deterministic("d1", timing(1000000, 950000, 1050000))});
  auto after = report_of({deterministic("d1", timing(1500000, 1400000, 1600000))});
  after.environment["torch"] = "2.15.0";  // another platform
  const auto held = baseline_from_report(before, "before.yaml"), now = baseline_from_report(after, "after.json");
  const auto plain = compare_snapshots(held, now, {0.10});
  ASSERT_TRUE(plain.platform_changed);
  EXPECT_FALSE(plain.timing_compared);
  EXPECT_EQ(plain.cells.at(0).changes, std::vector<Change>{Change::same});
  EXPECT_EQ(plain.timing_note,
            "Timings not compared: the platforms differ (--compare-timing-across-platforms compares them).");
  const auto asked = compare_snapshots(held, now, {0.10, true});
  EXPECT_TRUE(asked.timing_compared);
  EXPECT_EQ(asked.cells.at(0).changes, std::vector<Change>{Change::slower});
  EXPECT_NE(asked.timing_note.find("Timings compared across platforms on request"), std::string::npos);
}

TEST(Compare, FasterIsSlowerWithTheSnapshotsSwapped) {
  const Timing slow = timing(1500000, 1400000, 1600000), fast = timing(1000000, 950000, 1050000);
  EXPECT_TRUE(is_slower(fast, slow, 0.10));
  EXPECT_TRUE(is_faster(slow, fast, 0.10));
  EXPECT_FALSE(is_faster(fast, slow, 0.10));
  EXPECT_FALSE(is_slower(fast, slow, 0.60));  // beyond the spread, not beyond a 60% threshold
  EXPECT_EQ(classes(deterministic("d1", slow), deterministic("d1", fast)), std::vector<Change>{Change::faster});
}

TEST(Compare, ClassesCombineInPrecedenceOrder) {
  auto before = deterministic("d1", timing(1000000, 950000, 1050000));
  auto after = deterministic("d2", timing(1500000, 1400000, 1600000));
  before.verdict.kernel_digest = "k1";
  after.verdict.kernel_digest = "k2";
  const auto result = compare_one(before, after);
  EXPECT_EQ(result.changes, (std::vector<Change>{Change::drift, Change::kernels_changed, Change::slower}));
  EXPECT_EQ(result.detail.rfind(
                "digest d1 -> d2; kernels k1 -> k2 (names not recorded in either); median 1.00 ms -> 1.50 ms", 0),
            0u)
      << result.detail;
}

TEST(Compare, BrokeIgnoresTimingAndKernels) {
  auto after = with_kind(VerdictKind::timeout);
  after.verdict.timing = timing(9000000, 9000000, 9000000);
  EXPECT_EQ(classes(deterministic("d1"), after), std::vector<Change>{Change::broke});
}

TEST(Compare, MissingAndNewCells) {
  const auto kept = deterministic("d1");
  auto gone = cell("cumsum", "f32", kColumn, VerdictKind::deterministic, "c1");
  auto added = cell("bincount", "f32", kColumn, VerdictKind::deterministic, "b1");
  auto added_broken = cell("matmul", "f32", kColumn, VerdictKind::crashed);
  added_broken.verdict.message = "SIGSEGV";
  const auto comparison = compare_reports(report_of({kept, gone}), report_of({added, kept, added_broken}));
  ASSERT_EQ(comparison.cells.size(), 4u);
  // The new snapshot's order, then what it lacks.
  EXPECT_EQ(comparison.cells[0].key, added.cell.key);
  EXPECT_EQ(comparison.cells[0].changes, std::vector<Change>{Change::added});
  EXPECT_EQ(comparison.cells[0].detail, "now deterministic");
  EXPECT_EQ(comparison.cells[1].changes, std::vector<Change>{Change::same});
  EXPECT_EQ(comparison.cells[2].changes, (std::vector<Change>{Change::added, Change::broke}));
  EXPECT_EQ(comparison.cells[2].detail, "now crashed (SIGSEGV)");
  EXPECT_EQ(comparison.cells[3].key, gone.cell.key);
  EXPECT_EQ(comparison.cells[3].changes, std::vector<Change>{Change::missing});
  EXPECT_FALSE(comparison.cells[3].after);
  const auto counts = count_headlines(comparison);
  EXPECT_EQ(counts, (std::vector<std::pair<Change, int>>{{Change::missing, 1}, {Change::added, 2}, {Change::same, 1}}));
}

TEST(Compare, EnvironmentDiffListsEveryChangedFieldAndHowItCounts) {
  auto before = report_of({}), after = report_of({});
  EXPECT_FALSE(compare_reports(before, after).platform_changed);
  EXPECT_TRUE(compare_reports(before, after).environment_changes.empty());
  after.environment["torch"] = "2.15.0";
  after.environment["cuda"]["driver"] = 13020;
  after.environment["cuda"]["devices"] = {{{"name", "NVIDIA H100 80GB HBM3"}, {"sm_count", 132}}};
  after.environment["os"] = "Linux 6.12";  // not a platform field
  after.environment.erase("threads");
  const auto comparison = compare_reports(before, after);
  EXPECT_TRUE(comparison.platform_changed);
  ASSERT_EQ(comparison.environment_changes.size(), 5u);
  const auto& changes = comparison.environment_changes;
  EXPECT_EQ(changes[0].field, "torch");
  EXPECT_EQ(changes[0].before, "2.14.1");
  EXPECT_EQ(changes[0].after, "2.15.0");
  EXPECT_EQ(changes[0].difference, "2.14.1 -> 2.15.0");
  EXPECT_TRUE(changes[0].platform);
  EXPECT_FALSE(changes[0].unknown);
  EXPECT_EQ(changes[1].field, "CUDA driver");
  EXPECT_EQ(changes[1].before, "none");
  EXPECT_EQ(changes[1].after, "13.2");
  EXPECT_EQ(changes[2].field, "GPU");
  EXPECT_EQ(changes[2].before, "none");  // an empty device list is recorded
  EXPECT_EQ(changes[2].after, "NVIDIA H100 80GB HBM3 (132 SMs)");
  EXPECT_EQ(changes[3].field, "threads");
  EXPECT_EQ(changes[3].after, "");  // absent
  EXPECT_EQ(changes[3].difference, "2 -> not recorded");
  EXPECT_TRUE(changes[3].platform);
  EXPECT_TRUE(changes[3].unknown);
  EXPECT_EQ(changes[4].field, "OS");
  EXPECT_FALSE(changes[4].platform);
  EXPECT_EQ(comparison.platform_summary,
            "Platform changed: torch 2.14.1 -> 2.15.0, CUDA driver none -> 13.2, GPU none -> NVIDIA H100 80GB HBM3 "
            "(132 SMs); not recorded in after.json: threads (counted as possibly changed)");
}

TEST(Compare, EnvironmentFieldsMissingOnBothSidesAreEqualAndOnOneSideUnknown) {
  auto before = report_of({}), after = report_of({});
  before.environment = nlohmann::json::object();
  after.environment = nlohmann::json::object();
  EXPECT_FALSE(compare_reports(before, after).platform_changed);
  after.environment["cuda"] = {{"cudnn", 92400}};
  const auto comparison = compare_reports(before, after);
  ASSERT_EQ(comparison.environment_changes.size(), 1u);
  EXPECT_EQ(comparison.environment_changes[0].field, "cuDNN");
  EXPECT_EQ(comparison.environment_changes[0].after, "9.24.0");
  EXPECT_TRUE(comparison.environment_changes[0].unknown);
  EXPECT_TRUE(comparison.platform_changed);
  EXPECT_EQ(comparison.platform_summary,
            "Platform changed: not recorded in before.yaml: cuDNN (counted as possibly changed)");
}

TEST(Compare, ProbeOfKey) {
  EXPECT_EQ(probe_of_key("index_put_accumulate/f32@cpu|threads=1"), "index_put_accumulate");
  EXPECT_EQ(probe_of_key("control.racy/default@cuda:0|x=1"), "control.racy");
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

RandomSourceVerdict source(const std::string& name, const std::string& seeded) {
  RandomSourceVerdict found;
  found.name = name;
  found.kind = "numpy.random.RandomState";
  found.where = "global";
  found.seeded = seeded;
  found.drawn_in_runs = true;
  return found;
}

// A py cell's random sources travel in baselines and are compared: a source that stops being seeded
// alike is said in the detail, in both orders; a baseline written before they were kept says nothing.
TEST(Compare, ARandomSourceSeededOtherwiseIsSaidAndKeptInBaselines) {
  auto before = deterministic("d1aaaaaaaaaaaaaaaa");
  before.verdict.random_sources = {source("numpy.random", "alike")};
  auto after = with_kind(VerdictKind::nondeterministic);
  after.verdict.random_sources = {source("numpy.random", "differs"), source("torch (cpu)", "runner")};
  const auto result = compare_one(before, after);
  EXPECT_NE(result.detail.find("random sources: numpy.random seeded alike -> numpy.random not seeded alike, "
                               "torch (cpu) seeded by repro-audit"),
            std::string::npos)
      << result.detail;
  const auto yaml = baseline_to_yaml(baseline_from_report(report_of({after})));
  const auto reread = parse_baseline(yaml, "b.yaml");
  EXPECT_EQ(reread.cells.at(0).random_sources, "numpy.random not seeded alike, torch (cpu) seeded by repro-audit");
  auto unrecorded = deterministic("d1aaaaaaaaaaaaaaaa");
  auto seeded = deterministic("d1aaaaaaaaaaaaaaaa");
  seeded.verdict.random_sources = {source("random", "alike")};
  EXPECT_EQ(compare_one(unrecorded, seeded).detail, "");
}

}  // namespace
}  // namespace repro_audit
