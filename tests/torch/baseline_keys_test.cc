// The shipped CPU baseline of schema /1, migrated, names exactly the cells a fresh plan of the default
// config has on the CPU, but for the variants and probes added since: keys stay stable across the key-rule change and
// across added settings. Only the plan is compared (the real catalogue lives here, beside libtorch); nothing runs an
// audit.
#include <gtest/gtest.h>

#include <set>

#include "compare/baseline.h"
#include "plan/plan.h"
#include "probe/probe.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

void expect_keys_of_the_default_plan(const std::string& fixture) {
  const auto baseline = load_baseline_file(std::string(test_paths::kFixtureDir) + "/" + fixture);
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
  // Variants and probes added since the baseline was made are new cells, and only they are.
  const std::set<std::string> added = {"interpolate/bilinear-decomposed-f32", "interpolate/trilinear-decomposed-f32",
                                       "pooling/fractional_max3d-overlap-f32"};
  const std::set<std::string> added_probes = {"fill_uninitialized",
                                              "grid_sample",
                                              "histc",
                                              "index_backward",
                                              "index_write",
                                              "kthvalue",
                                              "max_unpool",
                                              "median",
                                              "mv_bmm",
                                              "nll_loss2d",
                                              "padding",
                                              "put",
                                              "put_accumulate",
                                              "resize_quantized",
                                              "rnn",
                                              "scatter_reduce",
                                              "scatter_reduce_extremum",
                                              "scatter_reduce_prod"};
  for (const auto& key : only_plan)
    EXPECT_TRUE(added.count(key.substr(0, key.find('@'))) || added_probes.count(key.substr(0, key.find('/'))))
        << "NEW in a fresh plan: " << key;
}

TEST(BaselineKeys, V1CpuBaselineMigratesToTheKeysOfTheDefaultPlan) {
  expect_keys_of_the_default_plan("baseline-v1-cpu-default.yaml");
}

// The baseline shipped before the cpu_capability and mkl_cbwr settings existed: their default (inherit)
// keeps every key, so it gates a new audit without MISSING or NEW cells.
TEST(BaselineKeys, TheBaselineFromBeforeThePortabilitySettingsKeepsItsKeys) {
  expect_keys_of_the_default_plan("baseline-v2-cpu-amd-epyc-before-fingerprint.yaml");
}

}  // namespace
}  // namespace repro_audit
