// Sharding a plan: the partition is stable, disjoint, complete and balanced; shards come from the
// command line or the scheduler's environment, and every malformed one is refused with its source.
#include "plan/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "common/user_error.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

using Environment = std::map<std::string, std::string>;

std::function<const char*(const char*)> lookup(const Environment& environment) {
  return [&environment](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  };
}

std::vector<Cell> plan_cells() {
  Config config;
  config.full_matrix = true;
  config.axes = {{"threads", {"1", "2", "3"}}, {"deterministic_algorithms", {"off", "on"}}};
  return make_plan(config, testing::test_catalogue(), "cpu").cells;
}

TEST(Shard, ParsesKOverN) {
  const auto shard = parse_shard("2/3", "--shard");
  EXPECT_EQ(shard.index, 2);
  EXPECT_EQ(shard.count, 3);
  EXPECT_EQ(shard.source, "--shard");
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "-1/3", "1/3x", "/3", ""})
    EXPECT_THROW(parse_shard(bad, "--shard"), UserError) << bad;
}

TEST(Shard, SlurmArrayIndexCountsFromTheMinimumId) {
  const Environment slurm = {
      {"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "5"}};
  const auto shard = shard_from_environment(lookup(slurm), ShardFrom::scheduler, std::nullopt);
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 3);
  EXPECT_EQ(shard->count, 3);
  EXPECT_EQ(shard->source, "slurm");
  // --array=0-10:5 has ids 0, 5, 10: the tasks are still 1..3.
  const Environment stepped = {{"SLURM_ARRAY_TASK_ID", "5"},
                               {"SLURM_ARRAY_TASK_COUNT", "3"},
                               {"SLURM_ARRAY_TASK_MIN", "0"},
                               {"SLURM_ARRAY_TASK_STEP", "5"}};
  EXPECT_EQ(shard_from_environment(lookup(stepped), ShardFrom::scheduler, std::nullopt)->index, 2);
  // --shard-from none ignores the array.
  EXPECT_FALSE(shard_from_environment(lookup(slurm), ShardFrom::none, std::nullopt));
}

TEST(Shard, MalformedSlurmVariablesAreRefusedByName) {
  const std::vector<Environment> bad = {
      {{"SLURM_ARRAY_TASK_ID", "1"}},                                                                  // no count
      {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}},  // not a number
      {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}},  // outside
      {{"SLURM_ARRAY_TASK_ID", "1"},
       {"SLURM_ARRAY_TASK_COUNT", "3"},
       {"SLURM_ARRAY_TASK_MIN", "0"},
       {"SLURM_ARRAY_TASK_STEP", "2"}},  // off the steps
  };
  for (const auto& environment : bad) {
    try {
      shard_from_environment(lookup(environment), ShardFrom::scheduler, std::nullopt);
      ADD_FAILURE() << "accepted " << environment.begin()->second;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("SLURM_ARRAY_TASK"), std::string::npos) << error.what();
    }
  }
}

TEST(Shard, KubernetesIndexNeedsTheCountFromTheCommandLine) {
  const Environment indexed = {{"JOB_COMPLETION_INDEX", "0"}};
  const auto shard = shard_from_environment(lookup(indexed), ShardFrom::scheduler, 4);
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 1);
  EXPECT_EQ(shard->count, 4);
  EXPECT_EQ(shard->source, "kubernetes");
  try {
    shard_from_environment(lookup(indexed), ShardFrom::scheduler, std::nullopt);
    ADD_FAILURE() << "an index without a count was accepted";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("--shards N"), std::string::npos) << error.what();
  }
  EXPECT_THROW(shard_from_environment(lookup({{"JOB_COMPLETION_INDEX", "4"}}), ShardFrom::scheduler, 4), UserError);
}

TEST(Shard, RankAndWorldSizeOnlyWhenAsked) {
  const Environment torchrun = {{"RANK", "1"}, {"WORLD_SIZE", "2"}};
  EXPECT_FALSE(shard_from_environment(lookup(torchrun), ShardFrom::scheduler, std::nullopt));
  const auto shard = shard_from_environment(lookup(torchrun), ShardFrom::env, std::nullopt);
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 2);
  EXPECT_THROW(shard_from_environment(lookup({}), ShardFrom::env, std::nullopt), UserError);
  EXPECT_THROW(shard_from_environment(lookup({{"RANK", "0"}}), ShardFrom::env, std::nullopt), UserError);
  EXPECT_THROW(shard_from_environment(lookup(torchrun), ShardFrom::env, 3), UserError);  // --shards disagrees
}

TEST(Shard, NoSchedulerNoShard) {
  EXPECT_FALSE(shard_from_environment(lookup({}), ShardFrom::scheduler, std::nullopt));
}

TEST(Shard, PartitionIsStableDisjointAndComplete) {
  const auto cells = plan_cells();
  ASSERT_GT(cells.size(), 10u);
  const auto costs = expected_cell_costs(cells, testing::test_catalogue(), 12, {});
  for (int count : {1, 2, 3, 5, static_cast<int>(cells.size()) + 2}) {
    const auto first = partition_cells(costs, count);
    EXPECT_EQ(first, partition_cells(costs, count)) << count;
    ASSERT_EQ(first.size(), cells.size());
    for (const int shard : first) {
      EXPECT_GE(shard, 0);
      EXPECT_LT(shard, count);
    }
  }
}

TEST(Shard, PartitionBalancesExpectedCost) {
  // One heavy cell and many light ones: the heavy one shares its shard with fewer cells.
  std::vector<double> costs(30, 1.0);
  costs[4] = 10;
  const auto shards = partition_cells(costs, 3);
  std::vector<double> load(3, 0);
  for (std::size_t i = 0; i < costs.size(); ++i) load[static_cast<std::size_t>(shards[i])] += costs[i];
  const auto [least, most] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*most - *least, 1.0 + 1e-9);  // greedy by size: within one light cell
  const auto heavy_shard = std::count(shards.begin(), shards.end(), shards[4]);
  for (int shard = 0; shard < 3; ++shard)
    if (shard != shards[4]) EXPECT_GT(std::count(shards.begin(), shards.end(), shard), heavy_shard + 5);
}

TEST(Shard, DeclaredWeightsAndTimingsSetTheCost) {
  auto catalogue = testing::test_catalogue();
  catalogue[0].weight = 10;              // index_put_accumulate
  catalogue[0].variants[1].weight = 40;  // its f64
  const auto cells = plan_cells();
  const auto costs = expected_cell_costs(cells, catalogue, 10, {});
  std::map<std::string, double> by_variant;
  for (std::size_t i = 0; i < cells.size(); ++i) by_variant[cells[i].probe + "/" + cells[i].variant] = costs[i];
  EXPECT_GT(by_variant["index_put_accumulate/f64"], by_variant["index_put_accumulate/f32"]);
  EXPECT_GT(by_variant["index_put_accumulate/f32"], by_variant["sum/f32"]);

  // Measured timings win, and scale the declared weights of cells without one.
  std::map<std::string, std::int64_t> timings;
  for (const auto& cell : cells)
    if (cell.probe == "sum") timings[cell.key] = 50'000'000;  // 50 ms a run: far above its weight 1
  const auto measured = expected_cell_costs(cells, catalogue, 10, timings);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].probe == "sum") EXPECT_NEAR(measured[i], 0.02 + 0.5, 1e-9) << cells[i].key;
    if (cells[i].key.rfind("index_put_accumulate/f32", 0) == 0)
      EXPECT_NEAR(measured[i], 0.02 + 10 * 50.0 * 10 / 1e3, 1e-9) << cells[i].key;  // weight 10 x 50 ms per unit
  }
}

TEST(Shard, UnsupportedCellsCostNothing) {
  Cell cell;
  cell.key = "ctc_loss/cudnn-f32@cpu";
  cell.probe = "ctc_loss";
  cell.variant = "cudnn-f32";
  cell.unsupported_reason = "the cuDNN path exists only on CUDA";
  EXPECT_EQ(expected_cell_costs({cell}, testing::test_catalogue(), 10, {})[0], 0.0);
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

TEST(Budget, SharesTheBudgetByExpectedCostAfterTheWorkerStarts) {
  std::vector<Cell> cells(3);
  const double left = share_budget(cells, {1.0, 1.0, 8.0}, 2, 4, 100.0);
  EXPECT_DOUBLE_EQ(left, 0.9 * 100.0 - 4 * kWorkerStartSeconds);
  // Per process: a cell of cost 8 gets 8 tenths of what is left, over 2 processes.
  EXPECT_DOUBLE_EQ(cells[2].budget_seconds, left * 0.8 / 2);
  EXPECT_DOUBLE_EQ(cells[0].budget_seconds, left * 0.1 / 2);
  double shared = 0;
  for (const auto& cell : cells) shared += cell.budget_seconds * 2;
  EXPECT_NEAR(shared, left, 1e-9);
  // A budget smaller than the worker starts still leaves every cell a few milliseconds.
  share_budget(cells, {1.0, 1.0, 8.0}, 2, 400, 1.0);
  for (const auto& cell : cells) EXPECT_GE(cell.budget_seconds, 0.01);
}

}  // namespace
}  // namespace repro_audit
