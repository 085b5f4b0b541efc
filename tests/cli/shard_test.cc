// Sharded audits on the real binary: the shard comes from --shard or the scheduler's environment,
// shards merge into the unsharded audit's cells, and every refusal exits 2 with its reason.
#include <nlohmann/json.hpp>

#include <set>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

// Two variants x two profiles x two thread counts: 8 deterministic cells on a CPU.
const std::string kShardedAudit =
    "--device cpu --probe sum/f32 --probe bincount/f32 --profile default --profile strict --axis threads=1,2 "
    "--repeats 2 --processes 1 --no-cost";
const std::string kSlurm = "SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_ID=";

class Sharding : public CliTest {
 protected:
  json report(const std::string& name) { return json::parse(slurp(path(name))); }
  std::set<std::string> keys(const json& report) {
    std::set<std::string> result;
    for (const auto& cell : report.at("cells")) result.insert(cell.at("key").get<std::string>());
    return result;
  }
};

TEST_F(Sharding, SlurmArrayShardsMergeIntoTheWholeAudit) {
  for (const char* id : {"4", "5"}) {
    const auto shard = run("run " + kShardedAudit + " --json " + path(std::string("s") + id + ".json"), kSlurm + id);
    ASSERT_EQ(shard.exit_code, 0) << shard.output;
    EXPECT_NE(shard.output.find(std::string("shard ") + (id[0] == '4' ? "1" : "2") + "/2 (from slurm"),
              std::string::npos)
        << shard.output;
  }
  const auto first = report("s4.json"), second = report("s5.json");
  EXPECT_EQ(first.at("shard").at("index"), 1);
  EXPECT_EQ(second.at("shard").at("index"), 2);
  EXPECT_EQ(first.at("shard").at("source"), "slurm");
  EXPECT_EQ(first.at("shard").at("plan").size(), 8u);
  EXPECT_FALSE(first.at("host").get<std::string>().empty());
  const auto a = keys(first), b = keys(second);
  for (const auto& key : a) EXPECT_FALSE(b.count(key)) << key << " is in both shards";
  EXPECT_EQ(a.size() + b.size(), 8u);

  const auto merged = run("merge " + path("s4.json") + " " + path("s5.json") + " -o " + path("merged.json"));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("merged 2 reports from 1 host into 8 cells"), std::string::npos) << merged.output;
  ASSERT_EQ(run("run " + kShardedAudit + " --shard-from none --json " + path("whole.json"), kSlurm + "5").exit_code, 0);
  const auto whole = report("whole.json");
  EXPECT_FALSE(whole.contains("shard"));
  const auto joined = report("merged.json");
  ASSERT_EQ(joined.at("cells").size(), whole.at("cells").size());
  for (std::size_t i = 0; i < whole.at("cells").size(); ++i) {
    const auto& x = joined.at("cells").at(i);
    const auto& y = whole.at("cells").at(i);
    EXPECT_EQ(x.at("key"), y.at("key"));
    EXPECT_EQ(x.at("verdict"), y.at("verdict")) << y.at("key");
    EXPECT_EQ(x.value("digest", ""), y.value("digest", "")) << y.at("key");
  }

  // A missing shard is named; --allow-partial merges what is there and says what is missing.
  const auto missing = run("merge " + path("s4.json") + " -o " + path("partial.json"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("missing shard 2/2"), std::string::npos) << missing.output;
  const auto partial = run("merge " + path("s4.json") + " -o " + path("partial.json") + " --allow-partial");
  EXPECT_EQ(partial.exit_code, 0) << partial.output;
  EXPECT_NE(partial.output.find("partial merge: shard 2/2 is missing"), std::string::npos) << partial.output;
  EXPECT_EQ(report("partial.json").at("merge").at("missing_shards"), json::array({"2/2"}));

  // The same shard twice is a rerun, not more processes.
  const auto twice =
      run("merge " + path("s4.json") + " " + path("s4.json") + " " + path("s5.json") + " -o " + path("twice.json"));
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("is given twice"), std::string::npos) << twice.output;
}

TEST_F(Sharding, ShardsOfDifferentConfigsAreRefused) {
  ASSERT_EQ(run("run " + kShardedAudit + " --shard 1/2 --json " + path("a.json")).exit_code, 0);
  auto other = kShardedAudit;
  other.replace(other.find("--repeats 2"), 11, "--repeats 3");
  ASSERT_EQ(run("run " + other + " --shard 2/2 --json " + path("b.json")).exit_code, 0);
  const auto merged = run("merge " + path("a.json") + " " + path("b.json") + " -o " + path("m.json"));
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_NE(merged.output.find("different configs"), std::string::npos) << merged.output;
  EXPECT_FALSE(fs::exists(path("m.json")));
}

TEST_F(Sharding, BadShardsExitTwoWithTheReason) {
  struct Case {
    std::string arguments, prefix, expected;
  };
  const std::vector<Case> cases = {
      {"--shard 3/2", "", "shard 3 of 2 is not a shard"},
      {"--shard x", "", "expected K/N"},
      {"", "JOB_COMPLETION_INDEX=1", "give --shards N"},
      {"--shards 3", "JOB_COMPLETION_INDEX=5", "shard 6 of 3"},
      {"", "SLURM_ARRAY_TASK_ID=1", "without SLURM_ARRAY_TASK_COUNT"},
      {"--shard-from env", "", "RANK and WORLD_SIZE are not set"},
      {"--shard 1/2 --shards 3", "", "disagree"},
      {"--timings " + write("timings.json", "{}"), "", "balances shards"},
  };
  for (const auto& c : cases) {
    const auto result = run("run " + kShardedAudit + " " + c.arguments, c.prefix);
    EXPECT_EQ(result.exit_code, 2) << c.arguments << " " << c.prefix << "\n" << result.output;
    EXPECT_NE(result.output.find(c.expected), std::string::npos) << c.arguments << "\n" << result.output;
  }
  // An index from a Kubernetes Indexed Job with its count.
  const auto indexed = run("run " + kShardedAudit + " --shards 2 --json " + path("k.json"), "JOB_COMPLETION_INDEX=1");
  ASSERT_EQ(indexed.exit_code, 0) << indexed.output;
  EXPECT_EQ(report("k.json").at("shard").at("index"), 2);
  EXPECT_EQ(report("k.json").at("shard").at("source"), "kubernetes");
  // torchrun's variables only when asked.
  ASSERT_EQ(run("run " + kShardedAudit + " --json " + path("r.json"), "RANK=0 WORLD_SIZE=2").exit_code, 0);
  EXPECT_FALSE(report("r.json").contains("shard"));
  ASSERT_EQ(run("run " + kShardedAudit + " --shard-from env --json " + path("r.json"), "RANK=0 WORLD_SIZE=2").exit_code,
            0);
  EXPECT_EQ(report("r.json").at("shard").at("source"), "env");
}

TEST_F(Sharding, AShardWithNoCellsComparedNothing) {
  // 8 cells in 9 shards: shard 9 holds none; it must not pass as an audit.
  const auto empty = run("run " + kShardedAudit + " --shard 9/9 --json " + path("e.json"));
  EXPECT_EQ(empty.exit_code, 1) << empty.output;
  EXPECT_NE(empty.output.find("shard 9/9 holds none of the plan's 8 cells"), std::string::npos) << empty.output;
}

}  // namespace
