// Merging shard reports: the merged report equals the unsharded audit judged from the same
// observations, shards from several hosts add their processes, and every refusal names its files.
#include "merge/merge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "config/config_json.h"
#include "common/user_error.h"
#include "plan/shard.h"
#include "report/json_io.h"
#include "sample_reports.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

using Observations = std::map<std::string, std::vector<ProcessObservation>>;

struct Audit {
  Config config;
  Plan plan;
  Observations observations;
};

ProcessObservation process(int index, const std::string& digest, std::int64_t time) {
  ProcessObservation observation;
  observation.process = index;
  observation.runs.push_back({digest, {{"out", digest}}, true, 0, ""});
  for (int run = 0; run < 3; ++run) observation.runs.push_back({digest, {{"out", digest}}, false, time + run, ""});
  return observation;
}

// The digest of a key's bits: 32 hex digits, different per `salt`.
std::string digest_of(const std::string& key, int salt = 0) {
  const auto hash = std::hash<std::string>{}(key + std::to_string(salt));
  return fmt::format("{:016x}{:016x}", hash, hash ^ 0x5bd1e995u);
}

// Every cell deterministic, two processes each; `salt` changes every digest (another host's bits).
Audit audit(int salt = 0) {
  Audit result;
  result.config.device = "cpu";
  result.config.axes = {{"threads", {"1", "2"}}};
  result.plan = make_plan(result.config, testing::test_catalogue(), "cpu");
  std::int64_t time = 1000;
  for (const auto& cell : result.plan.cells) {
    if (!cell.unsupported_reason.empty()) continue;
    time += 700;
    for (int p = 0; p < 2; ++p) result.observations[cell.key].push_back(process(p, digest_of(cell.key, salt), time));
  }
  return result;
}

Report finish(Report report, const Audit& audit, const std::string& host) {
  report.tool_version = "0.1.0";
  report.host = host;
  report.environment = testing::sample_environment();
  report.config = config_to_json(audit.config);
  return report;
}

Report whole_report(const Audit& audit, const std::string& host = "node-a") {
  return finish(build_report(audit.plan, audit.observations, testing::test_catalogue()), audit, host);
}

// Shard `index` of `count`, as `run --shard` writes it.
Report shard_report(const Audit& audit, int index, int count, const std::string& host = "node-a") {
  const auto costs = expected_cell_costs(audit.plan.cells, testing::test_catalogue(), 4, {});
  const auto assigned = partition_cells(costs, count);
  auto plan = audit.plan;
  plan.cells.clear();
  ShardInfo shard{index, count, "slurm", "declared weights", {}};
  for (std::size_t i = 0; i < audit.plan.cells.size(); ++i) {
    shard.plan.push_back(audit.plan.cells[i].key);
    if (assigned[i] == index - 1) plan.cells.push_back(audit.plan.cells[i]);
  }
  Observations observations;
  for (const auto& cell : plan.cells)
    if (audit.observations.count(cell.key)) observations[cell.key] = audit.observations.at(cell.key);
  auto report = finish(build_report(plan, observations, testing::test_catalogue()), audit, host);
  report.shard = shard;
  return report;
}

std::vector<ReportFile> shards(const Audit& audit, int count, const std::string& host = "node-a") {
  std::vector<ReportFile> inputs;
  for (int index = 1; index <= count; ++index)
    inputs.push_back({fmt::format("{}-shard-{}.json", host, index), shard_report(audit, index, count, host)});
  return inputs;
}

std::string refusal(const std::vector<ReportFile>& inputs, const MergeOptions& options = {}) {
  try {
    merge_reports(inputs, options);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(Merge, ShardsMergeIntoTheUnshardedReport) {
  const auto full = audit();
  const auto whole = whole_report(full);
  for (const int count : {1, 2, 3, 4}) {
    const auto merged = merge_reports(shards(full, count), {});
    ASSERT_EQ(merged.cells.size(), whole.cells.size()) << count;
    for (std::size_t i = 0; i < whole.cells.size(); ++i) {
      const auto& a = merged.cells[i];
      const auto& b = whole.cells[i];
      EXPECT_EQ(a.cell.key, b.cell.key);
      EXPECT_EQ(a.verdict.kind, b.verdict.kind) << b.cell.key;
      EXPECT_EQ(a.verdict.digest, b.verdict.digest) << b.cell.key;
      EXPECT_EQ(a.verdict.processes, b.verdict.processes) << b.cell.key;
      EXPECT_EQ(a.verdict.timing.median_ns, b.verdict.timing.median_ns) << b.cell.key;
      EXPECT_EQ(a.cost, b.cost) << b.cell.key;  // its reference may be in another shard
      EXPECT_EQ(a.documented, b.documented) << b.cell.key;
      EXPECT_EQ(a.contradiction.has_value(), b.contradiction.has_value()) << b.cell.key;
    }
    EXPECT_EQ(merged.columns, whole.columns);
    EXPECT_EQ(merged.portability.size(), whole.portability.size());
    ASSERT_TRUE(merged.merge);
    EXPECT_EQ(merged.merge->reports.size(), static_cast<std::size_t>(count));
    EXPECT_TRUE(merged.merge->missing_shards.empty());
    EXPECT_EQ(merged.host, "node-a");
    EXPECT_FALSE(merged.shard);
  }
}

TEST(Merge, ShardAndMergeSurviveJson) {
  const auto full = audit();
  const auto shard = shard_report(full, 2, 3);
  const auto reloaded = report_from_json(report_to_json(shard), "shard.json");
  ASSERT_TRUE(reloaded.shard);
  EXPECT_EQ(reloaded.shard->index, 2);
  EXPECT_EQ(reloaded.shard->count, 3);
  EXPECT_EQ(reloaded.shard->source, "slurm");
  EXPECT_EQ(reloaded.shard->plan, shard.shard->plan);
  EXPECT_EQ(reloaded.host, "node-a");
  const auto merged = merge_reports(shards(full, 3), {});
  const auto again = report_from_json(report_to_json(merged), "merged.json");
  ASSERT_TRUE(again.merge);
  EXPECT_EQ(again.merge->reports.size(), 3u);
  EXPECT_EQ(again.merge->reports[1].shard, "2/3");
  // A shard index outside its count is a malformed report.
  auto bad = report_to_json(shard);
  bad["shard"]["index"] = 4;
  EXPECT_THROW(report_from_json(bad, "bad.json"), UserError);
}

TEST(Merge, ShardsRunOnTwoHostsAddTheirProcesses) {
  const auto a = audit();
  auto inputs = shards(a, 2, "node-a");
  for (auto& input : shards(a, 2, "node-b")) inputs.push_back(std::move(input));
  const auto merged = merge_reports(inputs, {});
  for (const auto& cell : merged.cells) {
    if (is_skipped(cell.verdict)) continue;
    EXPECT_EQ(cell.verdict.processes, 4) << cell.cell.key;
    EXPECT_EQ(cell.verdict.kind, VerdictKind::deterministic) << cell.cell.key;
    ASSERT_EQ(cell.observations.size(), 4u);
    EXPECT_EQ(cell.observations[0].host, "node-a");
    EXPECT_EQ(cell.observations[3].host, "node-b");
    EXPECT_EQ(cell.observations[3].process, 3);
  }
  EXPECT_EQ(merged.host, "");  // several hosts
}

TEST(Merge, BitsThatDifferBetweenHostsAreNondeterministic) {
  const auto a = audit();
  auto b = audit();
  const auto& key = a.plan.cells.front().key;
  for (auto& observation : b.observations[key])
    for (auto& run : observation.runs) run.digest = run.outputs[0].second = digest_of(key, 7);
  auto inputs = shards(a, 1, "node-a");
  inputs.push_back({"node-b.json", shard_report(b, 1, 1, "node-b")});
  const auto merged = merge_reports(inputs, {});
  const auto* cell = find_cell(merged, key);
  ASSERT_TRUE(cell);
  EXPECT_EQ(cell->verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(cell->verdict.divergence_scope, "across-processes");
  EXPECT_EQ(find_cell(merged, a.plan.cells[1].key)->verdict.kind, VerdictKind::deterministic);
}

TEST(Merge, MissingShardsAreNamedOrMergedWhenAllowed) {
  const auto full = audit();
  auto inputs = shards(full, 3);
  const auto missing = inputs[1];
  inputs.erase(inputs.begin() + 1);
  const auto text = refusal(inputs);
  EXPECT_NE(text.find("missing shard 2/3"), std::string::npos) << text;
  EXPECT_NE(text.find("--allow-partial"), std::string::npos) << text;

  const auto partial = merge_reports(inputs, {true});
  ASSERT_TRUE(partial.merge);
  EXPECT_EQ(partial.merge->missing_shards, std::vector<std::string>{"2/3"});
  EXPECT_EQ(partial.merge->missing_cells.size(), missing.report.cells.size());
  EXPECT_EQ(partial.cells.size() + missing.report.cells.size(), full.plan.cells.size());
}

TEST(Merge, RefusesReportsOfDifferentAudits) {
  const auto full = audit();
  struct Case {
    const char* name;
    std::function<void(Report&)> change;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"config", [](Report& r) { r.config["repeats"] = 99; }, "different configs (repeats: 10 vs 99)"},
      {"tool version", [](Report& r) { r.tool_version = "0.2.0"; }, "by repro-audit 0.1.0"},
      {"device", [](Report& r) { r.device = "cuda:0"; }, "on device"},
      {"platform", [](Report& r) { r.environment["aten_cpu_capability"] = "AVX512"; }, "different platforms"},
      {"interrupted", [](Report& r) { r.complete = false; }, "interrupted audit"},
      {"shard count", [&](Report& r) { r.shard->count = 4; }, "shards of different partitions"},
      {"plan", [](Report& r) { r.shard->plan.pop_back(); }, "different plans"},
  };
  for (const auto& c : cases) {
    auto inputs = shards(full, 2);
    c.change(inputs[1].report);
    const auto text = refusal(inputs);
    EXPECT_NE(text.find(c.expected), std::string::npos) << c.name << ": " << text;
    if (std::string(c.name) != "interrupted")
      EXPECT_NE(text.find("node-a-shard-2.json"), std::string::npos) << c.name << ": " << text;
  }
  // The config's own path differs between hosts and is no difference.
  auto inputs = shards(full, 2);
  inputs[1].report.config["source"] = "/home/other/audit.yaml";
  EXPECT_NO_THROW(merge_reports(inputs, {}));
}

TEST(Merge, RefusesOverlappingShards) {
  const auto full = audit();
  // A cell in two shards of one partition.
  auto inputs = shards(full, 2);
  inputs[1].report.cells.push_back(inputs[0].report.cells.front());
  auto text = refusal(inputs);
  EXPECT_NE(text.find("overlapping shards: cell " + inputs[0].report.cells.front().cell.key), std::string::npos)
      << text;
  // The same shard from two hosts with other cells (balanced by other timings).
  inputs = shards(full, 2, "node-a");
  auto other = shards(full, 2, "node-b");
  other[0].report.cells.pop_back();
  inputs.push_back(other[0]);
  text = refusal(inputs);
  EXPECT_NE(text.find("hold different cells"), std::string::npos) << text;
  // The same shard twice from one host: a rerun, not more processes.
  inputs = shards(full, 2);
  inputs.push_back({"rerun.json", inputs[0].report});
  text = refusal(inputs);
  EXPECT_NE(text.find("shard 1/2 is given twice from host node-a"), std::string::npos) << text;
  EXPECT_NE(text.find("rerun.json"), std::string::npos) << text;
}

}  // namespace
}  // namespace repro_audit
