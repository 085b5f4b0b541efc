// Runs the real binary on real probes and checks exit codes and files.
#include <map>

#include "cli_tools.h"
#include "common/pattern.h"

#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

namespace {

using namespace testing_cli;
using repro_audit::Pattern;

using Cli = CliTest;

TEST_F(Cli, RunsASmallConfigAndWritesTheReport) {
  const auto config = write("audit.yaml", R"(
device: cpu
probes: {index_put_accumulate: [f32], sum: [f32]}
profiles: [default, strict]
axes: {threads: [2]}
repeats: 10
processes: 2
)");
  const auto report_path = (folder_ / "report.json").string();
  // The default profile's index_put_ race needs its 2 threads to run at once; on a machine busy with
  // other tests they may not, so a run that saw no race is tried again (at most 3 audits).
  bool race_seen = false;
  for (int attempt = 0; attempt < 3 && !race_seen; ++attempt) {
    const auto result = run("run --config " + config + " --json " + report_path);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("index_put_accumulate/f32"), std::string::npos) << result.output;
    std::ifstream in(report_path);
    const auto report = nlohmann::json::parse(in);
    EXPECT_EQ(report.at("schema"), "repro-audit.report/2");
    EXPECT_EQ(report.at("environment").at("torch").get<std::string>().empty(), false);
    ASSERT_EQ(report.at("cells").size(), 4u);
    for (const auto& cell : report.at("cells")) {
      for (const auto* field : {"key", "probe", "variant", "device", "settings", "verdict", "runs", "distinct_digests"})
        EXPECT_TRUE(cell.contains(field)) << field;
      // (1 warm-up + 10) x 2 processes; a cell documented as possibly diverging (index_put_'s default
      // profile) runs on to 60 runs in all while they agree, (1 + 30) x 2; fewer where a process stopped
      // at its first divergence.
      const bool quiet =
          cell.at("probe") == "index_put_accumulate" && cell.at("settings").at("deterministic_algorithms") != "on";
      const int full = quiet ? 62 : 22;
      if (cell.value("stopped_early", false))
        EXPECT_LT(cell.at("runs"), full);
      else
        EXPECT_EQ(cell.at("runs"), full) << cell.at("key");
      EXPECT_TRUE(cell.at("settings").is_object());
      if (cell.at("probe") != "index_put_accumulate") continue;
      if (cell.at("settings").at("deterministic_algorithms") == "on")
        EXPECT_EQ(cell.at("verdict"), "deterministic");
      else
        race_seen = cell.at("verdict") == "nondeterministic";
    }
  }
  EXPECT_TRUE(race_seen) << "index_put_accumulate/f32 under default with 2 threads agreed in 3 audits of 22 runs";
}

// --jobs 2: process 0 of every cell alone, then the second process's cells in two workers side by
// side, whose runs count for the verdict but not for timing; --jobs 1 marks nothing untimed.
TEST_F(Cli, JobsRunTheLaterProcessesSideBySideUntimedWithTheSameVerdicts) {
  std::map<std::string, std::map<std::string, std::string>> verdicts;
  for (const std::string jobs : {"1", "2"}) {
    const auto report_path = path("jobs" + jobs + ".json");
    const auto result =
        run("run --device cpu --probe sum/f32 --probe index_add/f32 --probe scatter_add/f32 "
            "--profile default --profile strict --axis threads=1 --repeats 3 --jobs " +
            jobs + " --json " + report_path);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const auto report = nlohmann::json::parse(slurp(report_path));
    ASSERT_EQ(report.at("cells").size(), 6u);
    for (const auto& cell : report.at("cells")) {
      verdicts[jobs][cell.at("key")] = cell.at("verdict").get<std::string>();
      const auto& observations = cell.at("observations");
      ASSERT_EQ(observations.size(), 2u) << cell.at("key");
      EXPECT_FALSE(observations.at(0).value("untimed", false)) << cell.at("key");
      EXPECT_EQ(observations.at(1).value("untimed", false), jobs == "2") << cell.at("key");
      EXPECT_GT(cell.at("timing").at("samples").get<int>(), 0) << cell.at("key");
    }
  }
  EXPECT_EQ(verdicts["1"].size(), 6u);
  EXPECT_EQ(verdicts["1"], verdicts["2"]);
}

TEST_F(Cli, BadConfigExitsTwoWithFileLineAndChoices) {
  const auto config = write("bad.yaml", "repeats: 3\nprofiles: [default, sloppy]\n");
  const auto result = run("run --config " + config);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("bad.yaml:2:21: unknown profile 'sloppy'; valid profiles:"), std::string::npos)
      << result.output;
}

TEST_F(Cli, BadArgumentsExitTwo) {
  EXPECT_EQ(run("run --probe nope").exit_code, 2);
  EXPECT_EQ(run("run --repeats 0").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  EXPECT_NE(run("run --probe sum/f128").output.find("valid variants:"), std::string::npos);
  const auto both = run("run --kind invariance --probe sum");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.output.find("--kind invariance and --probe: --kind picks a suite, --probe names probes; give one"),
            std::string::npos)
      << both.output;
  EXPECT_EQ(run("run --kind batch").exit_code, 2);
}

// The invariance suite is its own: `list` marks its probes, `--kind invariance` runs only them.
TEST_F(Cli, TheInvarianceSuiteRunsOnlyInvarianceProbes) {
  const auto list = run("list");
  EXPECT_NE(list.output.find("batch.mm [invariance probe: batch; run with --kind invariance]"), std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("split.sum [invariance probe: split;"), std::string::npos);
  const auto config = path("invariance.yaml");
  std::ofstream(config) << "kind: invariance\nprofiles: [default]\naxes: {threads: [2]}\nrepeats: 2\nprocesses: 1\n";
  const auto audit = run("run --device cpu --config " + config + " --json " + path("invariance.json") +
                         " --probe control.batch_invariant_row_sum --probe control.batch_variant_row_sum");
  EXPECT_EQ(audit.exit_code, 0) << audit.output;
  EXPECT_NE(audit.output.find("= invariant"), std::string::npos) << audit.output;  // the legend
  EXPECT_NE(audit.output.find("run-to-run, batch-invariant"), std::string::npos) << audit.output;
  const auto report = nlohmann::json::parse(slurp(path("invariance.json")));
  for (const auto& cell : report.at("cells")) {
    EXPECT_EQ(cell.at("invariance"), "batch");
    EXPECT_EQ(cell.at("verdict"), cell.at("probe") == "control.batch_variant_row_sum" ? "varies" : "invariant");
  }
  EXPECT_EQ(report.at("config").at("kind"), "invariance");
}

TEST_F(Cli, ListEnvHelpAndVersion) {
  const auto list = run("list");
  EXPECT_EQ(list.exit_code, 0);
  for (const auto* probe : {"index_put_accumulate", "index_add", "scatter_add", "sum"})
    EXPECT_NE(list.output.find(probe), std::string::npos) << probe;
  const auto env = run("env");
  EXPECT_EQ(env.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(env.output.substr(env.output.find('{'))).contains("torch"), true);
  EXPECT_EQ(run("--help").exit_code, 0);
  EXPECT_EQ(run("run --help").exit_code, 0);
  EXPECT_NE(run("--version").output.find("0.1.0"), std::string::npos);
}

TEST_F(Cli, CudaOnAMachineWithoutAGpuIsSkippedNotFailed) {
  const auto report_path = (folder_ / "report.json").string();
  const auto result = run("run --device cuda --probe sum/f32 --profile default --json " + report_path);
  std::ifstream in(report_path);
  const auto report = nlohmann::json::parse(in);
  if (report.at("environment").at("cuda").value("available", false)) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(result.exit_code, 1) << result.output;  // skipped, not passed: nothing was audited
  for (const auto& cell : report.at("cells")) EXPECT_EQ(cell.at("verdict"), "unsupported");
}

}  // namespace

namespace {

TEST_F(Cli, FullMatrixFromTheCommandLine) {
  const auto report_path = (folder_ / "report.json").string();
  const auto result =
      run("run --device cpu --probe index_put_accumulate/f32 --matrix full --axis deterministic_algorithms=off,on "
          "--axis threads=2 --axis fill_uninitialized_memory=true,false --repeats 3 --no-cost --json " +
          report_path);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(report_path);
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report.at("cells").size(), 4u);
  EXPECT_EQ(report.at("columns").size(), 4u);
  EXPECT_EQ(run("run --axis threads=two").exit_code, 2);
  EXPECT_NE(run("run --axis cudnn_speed=1").output.find("valid settings:"), std::string::npos);
}

TEST_F(Cli, ListShowsPerVariantDocumentation) {
  const auto list = run("list");
  for (const auto* probe : {"bincount", "embedding_bag", "ctc_loss", "pooling", "interpolate", "sparse_bmm", "conv",
                            "matmul", "cumsum", "control.racy_accumulate", "control.ordered_accumulate"})
    EXPECT_NE(list.output.find(probe), std::string::npos) << probe;
  EXPECT_NE(
      list.output.find("max-f32                mode=max, float32 [cpu, cuda] documented cuda: raises_under_strict"),
      std::string::npos)
      << list.output;
}

}  // namespace

namespace {

TEST_F(Cli, RoundTripThroughABaselineAndADriftedDigestFailsTheGate) {
  const auto report_path = (folder_ / "report.json").string();
  const auto baseline_path = (folder_ / "baseline.yaml").string();
  ASSERT_EQ(run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 3 --json " +
                report_path + " --save-baseline " + baseline_path)
                .exit_code,
            0);
  const auto same = run("gate --baseline " + baseline_path + " --report " + report_path);
  EXPECT_EQ(same.exit_code, 0) << same.output;

  std::ifstream in(report_path);
  auto report = nlohmann::json::parse(in);
  report["cells"][0]["digest"] = "00000000000000000000000000000000";
  std::ofstream((folder_ / "drifted.json").string()) << report.dump();
  const auto drifted =
      run("gate --baseline " + baseline_path + " --report " + (folder_ / "drifted.json").string() + " --junit " +
          (folder_ / "gate.xml").string() + " --markdown " + (folder_ / "gate.md").string());
  EXPECT_EQ(drifted.exit_code, 1) << drifted.output;
  EXPECT_NE(drifted.output.find("DRIFT"), std::string::npos) << drifted.output;
  EXPECT_TRUE(fs::exists(folder_ / "gate.xml"));
  EXPECT_TRUE(fs::exists(folder_ / "gate.md"));

  EXPECT_EQ(run("gate --baseline " + report_path + " --report /nonexistent.json").exit_code, 2);
  const auto compare = run("compare " + baseline_path + " " + (folder_ / "drifted.json").string());
  EXPECT_EQ(compare.exit_code, 0);
  EXPECT_NE(compare.output.find("DRIFT"), std::string::npos) << compare.output;
}

}  // namespace

namespace {

using namespace testing_cli;

TEST_F(Cli, ProgressIsOneFinalLineOffATerminalAndQuietLeavesTheSummaryOnly) {
  const auto result = run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --no-cost");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(Pattern(R"(1/1 cells, \d+ runs, \d+:\d\d elapsed, done, 0 failing so far\n)").found_in(result.output))
      << result.output;
  EXPECT_EQ(result.output.find('\r'), std::string::npos) << result.output;         // no redrawing in a log
  EXPECT_NE(result.output.find("sum/f32  "), std::string::npos) << result.output;  // the matrix
  const auto quiet =
      run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --no-cost --quiet");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("cells, "), std::string::npos) << quiet.output;
  EXPECT_EQ(quiet.output.find("sum/f32  "), std::string::npos) << quiet.output;
  EXPECT_NE(quiet.output.find("1 cells: 1 deterministic"), std::string::npos) << quiet.output;
}

}  // namespace
