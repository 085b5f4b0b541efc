// Collective cells on the torch-free side: the plan's rank columns, the kind's verdict lines and its
// world-size level, and the NCCL settings. The ranks themselves run in tests/torch and tests/cli.
#include <gtest/gtest.h>

#include <functional>

#include "common/user_error.h"
#include "config/config.h"
#include "hash/digest.h"
#include "kind/cell_kind.h"
#include "plan/plan.h"
#include "plan/ranks.h"
#include "report/report.h"
#include "test_catalogue.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

Catalogue with_collective() {
  auto catalogue = testing::test_catalogue();
  ProbeInfo all_reduce{"all_reduce", "", {{"f32", "", {"cpu", "cuda"}, ""}}, {{"cpu", Documented::deterministic}}};
  all_reduce.collective = true;
  catalogue.push_back(all_reduce);
  return catalogue;
}

Config collective_config(std::vector<ProbeSelection> probes = {{"all_reduce", {}}}) {
  Config config;
  config.probes = std::move(probes);
  config.profiles = {"default"};
  config.axes = {{"threads", {"1"}}};
  return config;
}

// One process whose runs each hold a result and one digest output per rank.
ProcessObservation ranked_runs(int process, int ranks, const std::string& result,
                               const std::function<std::string(int rank, int run)>& rank_bits, int runs = 3) {
  ProcessObservation observation;
  observation.process = process;
  for (int run = 0; run < runs; ++run) {
    RunObservation seen;
    seen.outputs.push_back({"result", digest_text(result)});
    for (int rank = 0; rank < ranks; ++rank)
      seen.outputs.push_back({"rank " + std::to_string(rank), digest_text(rank_bits(rank, run))});
    seen.digest = combine_digests(seen.outputs);
    observation.runs.push_back(seen);
  }
  return observation;
}

TEST(CollectivePlan, CollectivesTakeRanksTwoToFourAndOtherProbesRunAlone) {
  const auto plan = make_plan(collective_config({{"all_reduce", {}}, {"sum", {}}}), with_collective(), "cpu");
  std::vector<std::string> collective, single;
  for (const auto& cell : plan.cells) (cell.probe == "all_reduce" ? collective : single).push_back(cell.key);
  EXPECT_EQ(collective,
            (std::vector<std::string>{"all_reduce/f32@cpu|ranks=2,threads=1", "all_reduce/f32@cpu|ranks=3,threads=1",
                                      "all_reduce/f32@cpu|ranks=4,threads=1"}));
  EXPECT_EQ(single, std::vector<std::string>{"sum/f32@cpu|threads=1"});
  std::vector<std::string> labels;
  for (const auto& column : plan.columns) labels.push_back(column.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"default threads=1", "default threads=1 ranks=2",
                                              "default threads=1 ranks=3", "default threads=1 ranks=4"}));
  for (const auto& cell : plan.cells)
    EXPECT_EQ(kind_of(cell).name(), std::string(cell.probe == "all_reduce" ? "collective" : "repeat")) << cell.key;
}

TEST(CollectivePlan, TheRanksTheFlagSetsNameReplaceTheDefaults) {
  auto config = collective_config();
  config.axes["ranks"] = {"3", "6"};
  const auto plan = make_plan(config, with_collective(), "cpu");
  ASSERT_EQ(plan.cells.size(), 2u);
  EXPECT_EQ(plan.cells[0].settings.at("ranks"), "3");
  EXPECT_EQ(plan.cells[1].settings.at("ranks"), "6");
  // A probe that is no collective has no flag set left: said, not dropped.
  config.probes.push_back({"sum", {}});
  try {
    make_plan(config, with_collective(), "cpu");
    FAIL() << "a probe without a flag set was planned";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("'sum' is not a collective"), std::string::npos) << error.what();
  }
}

TEST(CollectivePlan, RanksOfOneForACollectiveAreRefusedNotReplaced) {
  auto config = collective_config();
  config.axes["ranks"] = {"1"};
  try {
    make_plan(config, with_collective(), "cpu");
    FAIL() << "ranks=1 was replaced by other rank counts";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("'all_reduce' is a collective, and no flag set has ranks of 2 or more"),
              std::string::npos)
        << error.what();
  }
  // With a flag set of 2 ranks beside it, only that one runs the collective; no rank count is added.
  config.axes["ranks"] = {"1", "2"};
  const auto plan = make_plan(config, with_collective(), "cpu");
  ASSERT_EQ(plan.cells.size(), 1u);
  EXPECT_EQ(plan.cells[0].settings.at("ranks"), "2");
}

TEST(CollectivePlan, TheKindSelectsCollectivesOnlyWhenAsked) {
  const auto catalogue = with_collective();
  const auto& all_reduce = catalogue.back();
  EXPECT_TRUE(is_of_kind(all_reduce, ProbeKind::collective));
  EXPECT_FALSE(is_of_kind(all_reduce, ProbeKind::repeat));
  EXPECT_FALSE(is_of_kind(catalogue.front(), ProbeKind::collective));
  EXPECT_TRUE(is_of_kind(all_reduce, ProbeKind::all));
  EXPECT_EQ(probe_kind_from_string("collective"), ProbeKind::collective);
}

TEST(CollectiveSettings, NcclSettingsAreCudaProcessSettingsCollapsedOnTheCpu) {
  for (const auto* name : {"nccl_algo", "nccl_proto", "nccl_min_channels", "nccl_max_channels", "nccl_nvls"}) {
    const auto* spec = find_setting(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->scope, SettingScope::process) << name;
    EXPECT_FALSE(spec->on_cpu) << name;
    EXPECT_TRUE(spec->on_cuda) << name;
    EXPECT_EQ(spec->environment_variable.rfind("NCCL_", 0), 0u) << name;
    EXPECT_EQ(spec->default_value, kInherit) << name;
  }
  auto config = collective_config();
  config.axes["nccl_algo"] = {"Ring", "Tree"};
  const auto cpu = make_plan(config, with_collective(), "cpu");
  for (const auto& cell : cpu.cells) EXPECT_EQ(cell.settings.at("nccl_algo"), kNotApplicable);
  EXPECT_EQ(cpu.cells.size(), 3u);  // Ring and Tree collapse on the CPU
  const auto cuda = make_plan(config, with_collective(), "cuda:0");
  EXPECT_EQ(cuda.cells.size(), 6u);
  EXPECT_NE(cuda.cells.front().key.find("nccl_algo=Ring"), std::string::npos) << cuda.cells.front().key;
  EXPECT_FALSE(is_valid_value(*find_setting("nccl_proto"), "Fast"));
  EXPECT_FALSE(is_valid_value(*find_setting("ranks"), "25"));
  EXPECT_TRUE(is_valid_value(*find_setting("ranks"), "24"));
}

Cell planned_cell(int ranks) {
  auto config = collective_config();
  config.axes["ranks"] = {std::to_string(ranks)};
  return make_plan(config, with_collective(), "cpu").cells.at(0);
}

TEST(CollectiveVerdict, RanksThatHoldOtherBitsAreNamedWithTheirRun) {
  const auto cell = planned_cell(3);
  const auto agree = [](int, int) { return std::string("same"); };
  const auto verdict = judge(cell, {ranked_runs(0, 3, "r", agree), ranked_runs(1, 3, "r", agree)});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_TRUE(verdict.variations.empty());
  EXPECT_EQ(verdict.message.find("ranks disagree"), std::string::npos) << verdict.message;

  const auto rank2_differs = [](int rank, int run) { return rank == 2 && run == 1 ? "other" : "same"; };
  const auto split = judge(cell, {ranked_runs(0, 3, "r", rank2_differs), ranked_runs(1, 3, "r", agree)});
  EXPECT_EQ(split.kind, VerdictKind::nondeterministic);  // rank 2's bits changed between runs
  ASSERT_EQ(split.variations.size(), 1u);
  EXPECT_EQ(split.variations[0].output, "rank 2");
  EXPECT_EQ(split.variations[0].run, 1);
  EXPECT_NE(split.message.find("ranks disagree: rank 2 holds other bits than rank 0 (run 1)"), std::string::npos)
      << split.message;
  const auto lines = kind_of(cell).detail_lines(split);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("RANKS DISAGREE"), std::string::npos);
}

TEST(CollectiveVerdict, TwoRanksSayWhatTheyCannotShow) {
  const auto cell = planned_cell(2);
  const auto agree = [](int, int) { return std::string("same"); };
  const auto verdict = judge(cell, {ranked_runs(0, 2, "r", agree), ranked_runs(1, 2, "r", agree)});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_NE(verdict.message.find("2 ranks: each element is a sum of two values"), std::string::npos) << verdict.message;
  EXPECT_EQ(
      judge(planned_cell(3), {ranked_runs(0, 3, "r", agree), ranked_runs(1, 3, "r", agree)}).message.find("2 ranks"),
      std::string::npos);
}

// all_reduce audited with ranks 2..4, the result's bits per rank count as `result_of` says.
Report audited_ranks(const std::function<std::string(int ranks)>& result_of, std::vector<std::string> ranks) {
  auto config = collective_config();
  config.axes["ranks"] = std::move(ranks);
  const auto plan = make_plan(config, with_collective(), "cpu");
  std::map<std::string, std::vector<ProcessObservation>> observations;
  const auto agree = [](int, int) { return std::string("same"); };
  for (const auto& cell : plan.cells) {
    const int count = ranks_of(cell.settings);
    for (int process = 0; process < 2; ++process)
      observations[cell.key].push_back(ranked_runs(process, count, result_of(count), agree));
  }
  return build_report(plan, observations, with_collective());
}

TEST(CollectivePortability, TheSameResultForEveryRankCountIsWorldSizeInvariant) {
  const auto same = audited_ranks([](int) { return std::string("x"); }, {"2", "3", "4"});
  ASSERT_EQ(same.portability.size(), 1u);
  EXPECT_EQ(same.portability[0].invariance, "world-size-invariant");
  EXPECT_EQ(level_text(same.portability[0]).find("world-size-invariant") != std::string::npos, true);

  const auto varies = audited_ranks([](int ranks) { return ranks == 4 ? "y" : "x"; }, {"2", "3", "4"});
  ASSERT_EQ(varies.portability.size(), 1u);
  EXPECT_EQ(varies.portability[0].invariance, "");
  EXPECT_NE(varies.portability[0].limit.find("ranks=2 vs ranks=4 give different bits"), std::string::npos)
      << varies.portability[0].limit;

  const auto one = audited_ranks([](int) { return std::string("x"); }, {"3"});
  EXPECT_EQ(one.portability[0].invariance, "");
  EXPECT_NE(one.portability[0].limit.find("one rank count measured"), std::string::npos) << one.portability[0].limit;
}

}  // namespace
}  // namespace repro_audit
