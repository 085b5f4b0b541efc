#include <gtest/gtest.h>

#include "audit/run_policy.h"
#include "common/user_error.h"

namespace repro_audit {
namespace {

TEST(RunPolicy, ByDefaultOneWorkerAtATimeWithEveryTimingRound) {
  TimingRule defaults;
  const auto policy = decide_run_policy({}, defaults);
  EXPECT_EQ(policy.jobs, 1);
  EXPECT_EQ(policy.timing.rounds, defaults.rounds);
  EXPECT_EQ(policy.timing.min_samples, defaults.min_samples);
  EXPECT_DOUBLE_EQ(policy.timing.budget_seconds, defaults.budget_seconds);
  EXPECT_DOUBLE_EQ(policy.budget_seconds, 0);
}

TEST(RunPolicy, WithoutCostsWorkersRunSideBySideWithoutTimingOnlyRuns) {
  const auto policy = decide_run_policy({.no_cost = true});
  EXPECT_EQ(policy.jobs, 0);
  EXPECT_EQ(policy.timing.rounds, 1);
  EXPECT_EQ(policy.timing.min_samples, 0);
  EXPECT_DOUBLE_EQ(policy.timing.budget_seconds, 0);
}

TEST(RunPolicy, AskedRoundsAndJobsWinOverTheDefaults) {
  const auto policy = decide_run_policy({.jobs = 3, .timing_rounds = 2, .no_cost = true});
  EXPECT_EQ(policy.jobs, 3);
  EXPECT_EQ(policy.timing.rounds, 2);
  // Rounds asked for are timed rounds: the timing rule stays.
  EXPECT_GT(policy.timing.min_samples, 0);
}

TEST(RunPolicy, ABudgetTakesOneTimingRoundAndRefusesMore) {
  const auto policy = decide_run_policy({.budget_seconds = 90});
  EXPECT_EQ(policy.timing.rounds, 1);
  EXPECT_DOUBLE_EQ(policy.budget_seconds, 90);
  EXPECT_EQ(decide_run_policy({.timing_rounds = 1, .budget_seconds = 90}).timing.rounds, 1);
  EXPECT_THROW(decide_run_policy({.timing_rounds = 2, .budget_seconds = 90}), UserError);
}

TEST(RunPolicy, OnAGpuWorkersRunOneAtATimeUnlessANumberWasAsked) {
  EXPECT_EQ(jobs_on("cpu", 0), 0);
  EXPECT_EQ(jobs_on("cuda", 0), 1);
  EXPECT_EQ(jobs_on("cuda", 4), 4);
  EXPECT_EQ(jobs_on("cpu", 2), 2);
}

}  // namespace
}  // namespace repro_audit
