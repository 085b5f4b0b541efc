// Verdicts that could have failed, on the real binary: the sensitivity check in `list`, the report and
// `show`; --detect's runs and what the summary claims for them; the rare-divergence control caught as
// often as its probability says at both ends.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class Power : public CliTest {};

TEST_F(Power, ListMeasuresTheSensitivityOfTheProbesNamed) {
  const auto listed = run("list --sensitivity --probe index_add --probe ctc_loss");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("index_add/f32"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("sensitive    "), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("INSENSITIVE"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("ctc_loss/f32"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("inside one kernel"), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("scatter_add"), std::string::npos) << "only the probes named";

  const auto plain = run("list");
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_NE(plain.output.find("accumulates: 'output' is a sum linear in 'source'"), std::string::npos);
  EXPECT_NE(run("list --probe index_add").exit_code, 0) << "--probe belongs to --sensitivity";
  const auto unknown = run("list --sensitivity --probe no_such_probe");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no probe 'no_such_probe'"), std::string::npos) << unknown.output;
}

TEST_F(Power, TheReportAndShowCarryTheSensitivityAndAVacuousVerdictSaysSo) {
  const auto report = path("r.json");
  const auto audit =
      run("run --device cpu --probe index_add/f32 --probe sum/f32 --profile default --axis threads=1 "
          "--repeats 2 --no-cost --json " +
          report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  auto written = json::parse(slurp(report));
  for (const auto& cell : written.at("cells")) {
    ASSERT_TRUE(cell.contains("sensitivity")) << cell.at("key");
    EXPECT_GT(cell.at("sensitivity").at("changed").get<int>(), 0) << cell.at("key");
    EXPECT_FALSE(cell.contains("vacuous"));
    EXPECT_FALSE(cell.at("observations").at(0).contains("sensitivity")) << "measured by the second process only";
    EXPECT_TRUE(cell.at("observations").at(1).contains("sensitivity"));
  }
  const auto shown = run("show " + report + " index_add");
  EXPECT_NE(shown.output.find("order sensitivity: "), std::string::npos) << shown.output;

  // The same report as if its inputs had been exact sums: the verdict stands, and says it is vacuous.
  for (auto& cell : written.at("cells")) {
    cell["sensitivity"]["changed"] = 0;
    cell["observations"][1]["sensitivity"]["changed"] = 0;
  }
  const auto crafted = path("vacuous.json");
  std::ofstream(crafted) << written.dump();
  const auto vacuous = run("show " + crafted + " index_add");
  EXPECT_EQ(vacuous.exit_code, 0) << vacuous.output;
  EXPECT_NE(vacuous.output.find("order sensitivity INSUFFICIENT: 0.0%"), std::string::npos) << vacuous.output;
  const auto markdown = path("vacuous.md");
  const auto merged = run("merge " + crafted + " -o " + path("merged.json") + " --markdown " + markdown);
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(slurp(markdown).find("2 deterministic verdict(s) vacuous"), std::string::npos) << slurp(markdown);
}

TEST_F(Power, DetectChoosesTheRunsAndTheSummarySaysWhatTheyCatch) {
  const auto report = path("d.json");
  const auto audit =
      run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --detect 0.2 "
          "--processes 2 --no-cost --json " +
          report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  // 15 runs are needed; 2 processes of a warm-up and 7 repeats make 16.
  EXPECT_NE(audit.output.find("Runs chosen by --detect 0.2: 15 runs per cell"), std::string::npos) << audit.output;
  const auto written = json::parse(slurp(report));
  EXPECT_EQ(written.at("config").at("detect"), 0.2);
  EXPECT_EQ(written.at("config").at("repeats"), 7);
  EXPECT_EQ(written.at("cells").at(0).at("runs"), 16);
  EXPECT_LE(written.at("cells").at(0).at("divergence_rate_bound").get<double>(), 0.2);

  EXPECT_NE(run("run --device cpu --probe sum/f32 --detect 0.2 --repeats 3").exit_code, 0);
  const auto budget = run("run --device cpu --probe sum/f32 --detect 0.2 --budget 1m");
  EXPECT_EQ(budget.exit_code, 2) << budget.output;
  EXPECT_NE(budget.output.find("--detect and --budget"), std::string::npos) << budget.output;
  EXPECT_NE(run("run --device cpu --probe sum/f32 --detect 0.9").exit_code, 0);
}

// 20 cells, each its own series of runs: at p = 0.3 with 41 runs every cell catches the divergence
// (each misses with 0.7^41 < 1e-6); at p = 0.01 with 3 runs about 3% do (7 or more of 20: below 1e-6).
TEST_F(Power, TheRareDivergenceControlIsCaughtAsOftenAsItsProbabilitySays) {
  std::string seeds;
  for (int seed = 1; seed <= 20; ++seed) seeds += (seed > 1 ? "," : "") + std::to_string(seed);
  const auto caught = [&](const std::string& variant, int repeats) {
    const auto report = path(variant + ".json");
    const auto audit = run("run --device cpu --probe control.rare_divergence/" + variant +
                           " --profile default --axis threads=1 --axis seed=" + seeds +
                           " --processes 1 --no-cost --repeats " + std::to_string(repeats) + " --json " + report);
    EXPECT_LE(audit.exit_code, 1) << audit.output;
    int count = 0, cells = 0;
    const auto written = json::parse(slurp(report));  // kept: the loop below walks into it
    for (const auto& cell : written.at("cells")) {
      ++cells;
      count += cell.at("verdict") == "nondeterministic" ? 1 : 0;
    }
    EXPECT_EQ(cells, 20);
    return count;
  };
  EXPECT_EQ(caught("p0.3", 40), 20);
  EXPECT_LE(caught("p0.01", 2), 6);
}

}  // namespace
