#include "verdict/verdict.h"

#include <gtest/gtest.h>

#include <cmath>

namespace repro_audit {
namespace {

Cell cell_with(const std::string& mode) {
  Cell cell;
  cell.key = "p/v@cpu|x";
  cell.settings = {{"deterministic_algorithms", mode}, {"threads", "2"}, {"seed", "0"}};
  return cell;
}

ProcessObservation observed_by(int index, const std::vector<std::string>& digests, std::int64_t time = 100) {
  ProcessObservation observation;
  observation.process = index;
  for (std::size_t i = 0; i < digests.size(); ++i)
    observation.runs.push_back({digests[i], {{"output", digests[i]}}, i == 0, time + static_cast<std::int64_t>(i), ""});
  return observation;
}

TEST(Verdict, AllRunsAgreeIsDeterministicWithABound) {
  const auto verdict = judge(cell_with("off"), {observed_by(0, {"a", "a", "a"}), observed_by(1, {"a", "a", "a"})});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_EQ(verdict.runs, 6);
  EXPECT_EQ(verdict.distinct_digests, 1);
  EXPECT_EQ(verdict.digest, "a");
  EXPECT_NEAR(verdict.divergence_rate_bound, 1 - std::pow(0.05, 1.0 / 5), 1e-12);
  EXPECT_FALSE(is_failing(verdict));
}

TEST(Verdict, DivergenceWithinOneProcess) {
  auto first = observed_by(0, {"a", "b", "a"});
  first.divergence = Divergence{"output", 1, 3, 10, 0.5, 2};
  const auto verdict = judge(cell_with("off"), {first, observed_by(1, {"a", "a", "a"})});
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.distinct_digests, 2);
  EXPECT_EQ(verdict.divergence_scope, "within-process");
  ASSERT_TRUE(verdict.divergence);
  EXPECT_EQ(verdict.divergence->differing_elements, 3);
  EXPECT_TRUE(is_failing(verdict));
}

TEST(Verdict, DivergenceOnlyAcrossProcessesNamesTheOutput) {
  const auto verdict = judge(cell_with("off"), {observed_by(0, {"a", "a"}), observed_by(1, {"b", "b"})});
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.divergence_scope, "across-processes");
  ASSERT_TRUE(verdict.divergence);
  EXPECT_EQ(verdict.divergence->output, "output");
  EXPECT_EQ(verdict.divergence->differing_elements, -1);
}

// A first process with no runs (a journal's entry beside processes that ran) is not what the others are
// compared with: the first that ran is.
TEST(Verdict, AFirstProcessWithoutRunsIsPassedOverForTheReference) {
  auto idle = observed_by(0, {});
  const auto verdict = judge(cell_with("off"), {idle, observed_by(1, {"a", "b"}), observed_by(2, {"a", "a"})});
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  ASSERT_TRUE(verdict.divergence);
  EXPECT_EQ(verdict.divergence->run, 1);
  EXPECT_EQ(first_with_runs({idle}), nullptr);
}

TEST(Verdict, RaisesOnlyUnderDeterministicModeAndOnlyForDeterminismErrors) {
  ProcessObservation raised;
  raised.status = ObservationStatus::exception;
  raised.message = "index_add_cuda_ does not have a deterministic implementation";
  EXPECT_EQ(judge(cell_with("on"), {raised, raised}).kind, VerdictKind::raises);
  EXPECT_EQ(judge(cell_with("off"), {raised, raised}).kind, VerdictKind::error);
  raised.message = "shape mismatch";
  EXPECT_EQ(judge(cell_with("on"), {raised, raised}).kind, VerdictKind::error);
}

TEST(Verdict, WarnOnlyModeWarnsAndJudgesDigests) {
  auto warned = observed_by(0, {"a", "b"});
  warned.warnings = {"scatter_add_cuda does not have a deterministic implementation, but you set warn_only"};
  const auto verdict = judge(cell_with("warn"), {warned});
  EXPECT_EQ(verdict.kind, VerdictKind::warns);
  EXPECT_FALSE(verdict.digests_agree);
  EXPECT_TRUE(is_failing(verdict));
  auto quiet = observed_by(0, {"a", "a"});
  quiet.warnings = warned.warnings;
  EXPECT_FALSE(is_failing(judge(cell_with("warn"), {quiet})));
  auto deprecation = observed_by(0, {"a", "a"});
  deprecation.warnings = {"setAllowTF32CuBLAS is going to be deprecated"};
  const auto unrelated = judge(cell_with("warn"), {deprecation});
  EXPECT_EQ(unrelated.kind, VerdictKind::deterministic);  // kept, but not a determinism alert
  EXPECT_EQ(unrelated.warnings.size(), 1u);
}

TEST(Verdict, CrashTimeoutUnsupportedAndTooFewRuns) {
  ProcessObservation crashed;
  crashed.status = ObservationStatus::crashed;
  crashed.message = "signal SIGSEGV";
  EXPECT_EQ(judge(cell_with("off"), {observed_by(0, {"a", "a"}), crashed}).kind, VerdictKind::crashed);
  ProcessObservation timeout;
  timeout.status = ObservationStatus::timeout;
  EXPECT_EQ(judge(cell_with("off"), {timeout}).kind, VerdictKind::timeout);
  auto cell = cell_with("off");
  cell.unsupported_reason = "CUDA only";
  const auto unsupported = judge(cell, {});
  EXPECT_EQ(unsupported.kind, VerdictKind::unsupported);
  EXPECT_TRUE(is_skipped(unsupported));
  EXPECT_EQ(judge(cell_with("off"), {observed_by(0, {"a"})}).kind, VerdictKind::error);  // never deterministic on 1 run
}

TEST(Verdict, KindsAndDtypesHaveOneNameEach) {
  for (const auto kind :
       {VerdictKind::deterministic, VerdictKind::nondeterministic, VerdictKind::warns, VerdictKind::raises,
        VerdictKind::unsupported, VerdictKind::error, VerdictKind::crashed, VerdictKind::timeout})
    EXPECT_EQ(verdict_from_string(to_string(kind)), kind);
  EXPECT_EQ(verdict_from_string("ok"), std::nullopt);  // a status, not a verdict
  EXPECT_STREQ(to_string(DType::f16), "f16");
  EXPECT_STREQ(to_string(DType::bf16), "bf16");
  EXPECT_STREQ(to_string(DType::f32), "f32");
  EXPECT_STREQ(to_string(DType::f64), "f64");
}

TEST(Verdict, TimingSkipsWarmupAndTakesPercentiles) {
  const auto timing = timing_of({10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  EXPECT_EQ(timing.median_ns, 55);
  EXPECT_EQ(timing.p10_ns, 10);
  EXPECT_EQ(timing.p90_ns, 90);
  const auto verdict = judge(cell_with("off"), {observed_by(0, {"a", "a", "a"}, 1000)});
  EXPECT_EQ(verdict.timing.samples, 2);  // the first run is warm-up
}

TEST(Verdict, AProcessThatRanBesideOthersGivesDigestsButNoTimings) {
  auto beside = observed_by(1, {"a", "a", "a"}, 9000);
  beside.untimed = true;
  const auto verdict = judge(cell_with("off"), {observed_by(0, {"a", "a", "a"}, 1000), beside});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_EQ(verdict.runs, 6);
  EXPECT_EQ(verdict.timing.samples, 2);
  EXPECT_LT(verdict.timing.median_ns, 2000);  // the 9000 ns runs beside others are not timings
  auto diverged = beside;
  diverged.runs.back().digest = std::string(32, 'f');
  EXPECT_EQ(judge(cell_with("off"), {observed_by(0, {"a", "a", "a"}, 1000), diverged}).kind,
            VerdictKind::nondeterministic);
}

TEST(Contradiction, FollowsWhatIsDocumentedForTheSettings) {
  Verdict diverged;
  diverged.kind = VerdictKind::nondeterministic;
  Verdict agreed;
  agreed.kind = VerdictKind::deterministic;
  agreed.digests_agree = true;
  const FlagSet off = {{"deterministic_algorithms", "off"}}, on = {{"deterministic_algorithms", "on"}};
  EXPECT_FALSE(find_contradiction(Documented::alternative_under_strict, off, diverged));
  ASSERT_TRUE(find_contradiction(Documented::alternative_under_strict, on, diverged));
  EXPECT_TRUE(find_contradiction(Documented::alternative_under_strict, on, diverged)->breaks_audit);
  EXPECT_TRUE(find_contradiction(Documented::deterministic, off, diverged)->breaks_audit);
  EXPECT_FALSE(find_contradiction(Documented::nondeterministic, on, diverged));
  EXPECT_TRUE(find_contradiction(Documented::nondeterministic, on, agreed)->breaks_audit);
  const auto stale = find_contradiction(Documented::raises_under_strict, on, agreed);
  ASSERT_TRUE(stale);
  EXPECT_FALSE(stale->breaks_audit);  // documentation out of date, results still reproducible
}

}  // namespace
}  // namespace repro_audit
