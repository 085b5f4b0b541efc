// Timing on a GPU, checked on the CPU: samples at one SM clock, costs only between cells timed at the
// same clock, strict's cost against the default where strict pins a process-wide setting (CUDA's
// CUBLAS_WORKSPACE_CONFIG), and what agreeing runs of a documented-racy cell do and do not show. The
// real H200 audit (tests/core/fixtures) stands for a GPU run.
#include <gtest/gtest.h>

#include "h200_audit.h"
#include "protocol/observation_json.h"
#include "report/text_format.h"
#include "timing/timing.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

TEST(GpuTiming, SamplesAtAnotherClockAreLeftOutAndCounted) {
  const std::vector<std::int64_t> samples = {100, 101, 102, 99, 100, 101, 100, 102, 400, 410};
  const std::vector<int> clocks = {1980, 1980, 1980, 1980, 1980, 1980, 1980, 1980, 1500, 1500};
  const auto timing = timing_at_one_clock(samples, clocks);
  EXPECT_EQ(timing.clock_mhz, 1980);
  EXPECT_EQ(timing.samples, 8);
  EXPECT_EQ(timing.samples_at_other_clocks, 2);
  EXPECT_LE(timing.p90_ns, 102) << "a sample at 1500 MHz was mixed in";
  // Without clocks (the CPU, older files) every sample counts.
  EXPECT_EQ(timing_at_one_clock(samples, {}).samples, 10);
  EXPECT_EQ(timing_at_one_clock(samples, {}).clock_mhz, 0);
}

TEST(GpuTiming, NoCostBetweenCellsTimedAtDifferentClocks) {
  Timing fast = timing_of({100, 100, 101, 99, 100, 100, 101, 99});
  Timing slow = timing_of({200, 200, 201, 199, 200, 200, 201, 199});
  fast.clock_mhz = 1980;
  slow.clock_mhz = 1980;
  ASSERT_TRUE(cost_ratio(slow, fast));
  EXPECT_TRUE(cost_ratio(slow, fast)->measurable());
  slow.clock_mhz = 1410;
  EXPECT_FALSE(cost_ratio(slow, fast)) << "the ratio would measure the clock, not the switch";
  slow.clock_mhz = 0;  // one clock unknown: compared, as before clocks were kept
  EXPECT_TRUE(cost_ratio(slow, fast));
}

TEST(GpuTiming, ClocksTravelWithTheSamplesAndMustMatchThem) {
  ProcessObservation observation;
  observation.timing_ns = {10, 11};
  observation.timing_clock_mhz = {1980, 1980};
  nlohmann::json json = observation;
  json["status"] = "ok";
  EXPECT_EQ(json.get<ProcessObservation>().timing_clock_mhz, observation.timing_clock_mhz);
  json["timing_clock_mhz"] = {1980};
  EXPECT_THROW(json.get<ProcessObservation>(), nlohmann::json::exception);
  Timing timing = timing_of({1, 2, 3, 4, 5, 6});
  timing.clock_mhz = 1755;
  timing.samples_at_other_clocks = 3;
  const nlohmann::json timing_json = timing;
  EXPECT_EQ(timing_json.get<Timing>().clock_mhz, 1755);
  EXPECT_EQ(timing_json.get<Timing>().samples_at_other_clocks, 3);
}

using testing::h200_audit;

// The H200 audit's report had no cost for any cell: strict's reference was looked up with strict's
// CUBLAS_WORKSPACE_CONFIG, which no default cell has. Every strict cell with timings now has one, and
// no default cell is costed against itself.
TEST(GpuTiming, StrictCellsOnCudaAreCostedAgainstTheDefault) {
  const auto report = h200_audit();
  int strict = 0, costed = 0;
  for (const auto& cell : report.cells) {
    const bool is_default = cell.cell.key.find('|') == std::string::npos;
    if (is_default) {
      EXPECT_FALSE(cell.cost) << cell.cell.key;
      continue;
    }
    if (cell.verdict.timing.samples == 0) continue;
    ++strict;
    if (cell.cost) ++costed;
  }
  EXPECT_GT(strict, 90);  // 97 of its 116 strict and strict-warn cells ran (the others raised)
  EXPECT_EQ(costed, strict);
}

TEST(GpuTiming, AgreeingRunsOfADocumentedRaceSayWhatTheyBound) {
  FlagSet defaults = {{"deterministic_algorithms", "off"}};
  FlagSet strict = {{"deterministic_algorithms", "on"}};
  EXPECT_TRUE(may_diverge(Documented::raises_under_strict, defaults));
  EXPECT_FALSE(may_diverge(Documented::raises_under_strict, strict));
  EXPECT_TRUE(may_diverge(Documented::raises_under_strict, {{"deterministic_algorithms", "warn"}}));
  EXPECT_FALSE(may_diverge(Documented::alternative_under_strict, strict));
  EXPECT_FALSE(may_diverge(Documented::deterministic, defaults));
  Verdict verdict;
  verdict.kind = VerdictKind::deterministic;
  verdict.digests_agree = true;
  verdict.runs = 22;
  verdict.divergence_rate_bound = divergence_rate_bound(22);
  const auto few = quiet_runs_text(Documented::raises_under_strict, defaults, verdict);
  EXPECT_NE(few.find("too few to say a race is rarer than 5%"), std::string::npos) << few;
  verdict.runs = kQuietRuns;
  verdict.divergence_rate_bound = divergence_rate_bound(kQuietRuns);
  EXPECT_LT(verdict.divergence_rate_bound, kQuietRateLevel);
  const auto enough = quiet_runs_text(Documented::raises_under_strict, defaults, verdict);
  EXPECT_NE(enough.find("fewer than 4.95% of runs"), std::string::npos) << enough;
  EXPECT_EQ(quiet_runs_text(Documented::deterministic, defaults, verdict), "");
}

}  // namespace
}  // namespace repro_audit
