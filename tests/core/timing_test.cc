// The median's interval, the stopping rule and cost ratios: the statistics every timing rests on.
#include "timing/timing.h"

#include <gtest/gtest.h>

#include <random>

namespace repro_audit {
namespace {

TEST(MedianInterval, OrderStatisticsWithAtLeast95PercentCoverage) {
  EXPECT_FALSE(median_interval_ranks(5));  // [min, max] of 5 covers with 93.75% only
  EXPECT_EQ(median_interval_ranks(6), std::make_pair(std::size_t{0}, std::size_t{5}));
  EXPECT_EQ(median_interval_ranks(10), std::make_pair(std::size_t{1}, std::size_t{8}));  // 97.9%
  // The textbook ranks for 100 samples: the 40th and 61st (1-based).
  EXPECT_EQ(median_interval_ranks(100), std::make_pair(std::size_t{39}, std::size_t{60}));
  const auto large = median_interval_ranks(10000);
  ASSERT_TRUE(large);
  EXPECT_NEAR(static_cast<double>(large->first), 5000 - 1.96 * 50, 2);
  EXPECT_EQ(large->second, 9999 - large->first);
}

TEST(MedianInterval, CoversTheTrueMedianAsOftenAsPromised) {
  std::mt19937_64 random(7);
  std::exponential_distribution<double> skewed(1.0);  // median ln 2: a skewed, timing-like law
  int covered = 0;
  constexpr int trials = 4000;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::int64_t> samples;
    for (int i = 0; i < 25; ++i) samples.push_back(static_cast<std::int64_t>(1e6 * (1 + skewed(random))));
    const auto timing = timing_of(samples);
    const double truth = 1e6 * (1 + std::log(2.0));
    covered += timing.ci_low_ns <= truth && truth <= timing.ci_high_ns;
  }
  EXPECT_GE(covered, trials * 0.94);  // 95.7% exactly for 25 samples, less the sampling error
}

TEST(Timing, SummarisesSamplesWithTheirInterval) {
  std::vector<std::int64_t> samples;
  for (int i = 1; i <= 100; ++i) samples.push_back(1000 + i);
  const auto timing = timing_of(samples, 0.011);
  EXPECT_EQ(timing.samples, 100);
  EXPECT_EQ(timing.median_ns, 1050);  // (1050 + 1051) / 2, rounded down
  EXPECT_EQ(timing.ci_low_ns, 1040);
  EXPECT_EQ(timing.ci_high_ns, 1061);
  EXPECT_NEAR(timing.relative_half_width(), 10.5 / 1050, 1e-9);
  EXPECT_TRUE(timing.target_reached);
  EXPECT_FALSE(timing_of(samples, 0.009).target_reached);
  const auto few = timing_of({5, 6, 7});
  EXPECT_FALSE(few.has_interval());
  EXPECT_FALSE(few.target_reached);
  EXPECT_EQ(few.relative_half_width(), 1.0);
}

TEST(TimingRule, StopsAtTheTargetTheBudgetOrTheCap) {
  const TimingRule rule{.min_samples = 10, .target = 0.01, .budget_seconds = 1.0, .max_samples = 50};
  const std::vector<std::int64_t> quiet(12, 1000);
  EXPECT_FALSE(timing_done({1000, 1000, 1000}, rule, 0.0));  // below the minimum, even when quiet
  EXPECT_TRUE(timing_done(quiet, rule, 0.0));
  std::vector<std::int64_t> noisy;
  for (int i = 0; i < 12; ++i) noisy.push_back(i % 2 ? 1000 : 2000);
  EXPECT_FALSE(timing_done(noisy, rule, 0.5));
  EXPECT_TRUE(timing_done(noisy, rule, 1.0));  // the budget is spent
  noisy.resize(50, 1500);
  EXPECT_TRUE(timing_done(noisy, rule, 0.0));  // the cap
}

Timing timed(std::int64_t median, std::int64_t half_width) {
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 41; ++i) samples.push_back(median - half_width + half_width * i / 20);
  return timing_of(samples);
}

TEST(CostRatio, ShowsACostOnlyWhenTheIntervalExcludesOne) {
  const auto reference = timed(1'000'000, 100'000);
  const auto costly = cost_ratio(timed(1'300'000, 100'000), reference);
  ASSERT_TRUE(costly);
  EXPECT_NEAR(costly->value, 1.3, 1e-9);
  EXPECT_GT(costly->low, 1.0);
  EXPECT_TRUE(costly->measurable());
  EXPECT_EQ(cost_text(*costly), "1.3x");
  const auto noise = cost_ratio(timed(1'070'000, 100'000), reference);
  ASSERT_TRUE(noise);
  EXPECT_FALSE(noise->measurable());
  EXPECT_EQ(cost_text(*noise), "~1.0x");
  const auto faster = cost_ratio(timed(500'000, 20'000), reference);
  EXPECT_EQ(cost_text(*faster), "0.5x");
  EXPECT_FALSE(cost_ratio(Timing{}, reference));
  // A report without intervals: p10..p90 stand in, so a ratio inside the spread is noise.
  Timing old{.median_ns = 1'100'000, .p10_ns = 900'000, .p90_ns = 1'300'000, .samples = 20};
  EXPECT_FALSE(cost_ratio(old, reference)->measurable());
}

}  // namespace
}  // namespace repro_audit
