// The shipped CPU baseline of schema /1, migrated, names exactly the cells a fresh plan of the default
// config has on the CPU: keys stay stable across the key-rule change and across added settings. Only
// the plan is compared (the real catalogue lives here, beside libtorch); nothing runs an audit.
#include <gtest/gtest.h>

#include <set>

#include "compare/baseline.h"
#include "plan/plan.h"
#include "worker/probe.h"

namespace repro_audit {
namespace {

TEST(BaselineKeys, V1CpuBaselineMigratesToTheKeysOfTheDefaultPlan) {
  const auto baseline = load_baseline_file(std::string(REPRO_AUDIT_FIXTURE_DIR) + "/baseline-v1-cpu-default.yaml");
  std::set<std::string> baseline_keys;
  for (const auto& cell : baseline.cells) baseline_keys.insert(cell.key);
  const auto catalogue = registered_catalogue();
  std::set<std::string> plan_keys;
  for (const auto& cell : make_plan(Config{}, catalogue, "cpu").cells) plan_keys.insert(cell.key);
  ASSERT_EQ(baseline_keys.size(), baseline.cells.size());
  std::vector<std::string> only_baseline, only_plan;
  std::set_difference(baseline_keys.begin(), baseline_keys.end(), plan_keys.begin(), plan_keys.end(),
                      std::back_inserter(only_baseline));
  std::set_difference(plan_keys.begin(), plan_keys.end(), baseline_keys.begin(), baseline_keys.end(),
                      std::back_inserter(only_plan));
  EXPECT_TRUE(only_baseline.empty()) << "MISSING from a fresh plan, e.g. " << only_baseline.front();
  EXPECT_TRUE(only_plan.empty()) << "NEW in a fresh plan, e.g. " << only_plan.front();
}

}  // namespace
}  // namespace repro_audit
