// Bad input is exit 2 with the file and the reason, at load time, never a probe failure, a crash,
// unbounded memory or an internal error.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class BadInput : public CliTest {
 protected:
  void expect_rejected(const std::string& command, const std::string& message, const std::string& prefix = "") {
    const auto result = run(command, prefix);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << command << "\n" << result.output;
  }
  // Made once for every test (cli_tools.h), read only.
  static std::string small_report() { return shared_report("small", kSmallAudit); }
};

TEST_F(BadInput, AFileThatOpensButCannotBeReadIsNotTakenAsEmpty) {
  fs::create_directories(folder_ / "a-folder");
  const auto report = small_report();
  expect_rejected("run --config /proc/self/mem", "/proc/self/mem");
  expect_rejected("gate --baseline " + report + " --report " + report + " --policy /proc/self/mem", "/proc/self/mem");
  expect_rejected("show " + path("a-folder"), "a-folder");
  expect_rejected("compare " + path("a-folder") + " " + report, "a-folder");
  expect_rejected("gate --baseline " + path("a-folder") + " --report " + report, "a-folder");
  expect_rejected("baseline " + path("a-folder") + " -o " + path("b.yaml"), "a-folder");
}

TEST_F(BadInput, ConfigMistakesAreRejectedAtLoadNotAsProbeFailures) {
  const std::pair<std::string, std::string> configs[] = {
      {"axes: {threads: [0]}\n", "invalid value '0' for setting 'threads'; valid values: an integer from 1 to 1024"},
      {"axes: {threads: [2, 100000]}\n", "invalid value '100000' for setting 'threads'"},
      {"repeats: 1\nprocesses: 1\n", "c.yaml:2:12: repeats x processes is 1 x 1"},
      {"repeats: 2\nrepeats: 3\n", "c.yaml:2:1"},
      {"probes: {sum: [f32], sum: [f64]}\n", "c.yaml:1:22"},
      {"repeats: 2\n---\nrepeats: 3\n", "c.yaml"},
  };
  for (const auto& [text, message] : configs) expect_rejected("run --config " + write("c.yaml", text), message);
  expect_rejected("run --axis threads=0", "invalid value '0' for setting 'threads'");
  expect_rejected("run --repeats 1 --processes 1", "repeats x processes is 1 x 1");
  const auto report = small_report();
  expect_rejected("compare " + report + " " + report + " --slower-threshold nan", "--slower-threshold");
  const auto baseline = path("b.yaml");
  ASSERT_EQ(run("baseline " + report + " -o " + baseline).exit_code, 0);
  const auto text = slurp(baseline);
  const auto digest_at = text.find("digest: ") + 8;
  for (const auto& bad :
       {std::string("ABCDEF0123456789ABCDEF0123456789"), std::string(31, 'a'), std::string(32, 'g')}) {
    auto edited = text;
    edited.replace(digest_at, 32, bad);
    expect_rejected("gate --baseline " + write("bad.yaml", edited) + " --report " + report, "bad.yaml:");
  }
}

TEST_F(BadInput, OptionsThatWouldBeSilentlyIgnoredAreAConflict) {
  const auto report = small_report();
  const auto config = write("c.yaml", "repeats: 2\n");
  fs::create_directories(folder_ / "journal");
  expect_rejected("run --matrix full --profile strict", "--matrix full and --profile");
  expect_rejected("gate --baseline " + report + " --report " + report + " --config " + config, "--report and --config");
  expect_rejected("gate --baseline " + report + " --report " + report + " --device cpu", "--report and --device");
  expect_rejected("gate --baseline " + report + " --report " + report + " --resume " + path("journal"),
                  "--report and --resume");
  expect_rejected("run --resume " + path("journal") + " --journal " + path("other"), "--resume and --journal");
}

// A setting only py cells take, on an audit with no py cell, would have its columns left out in silence;
// a plan refused after the journal was made leaves none; callables given to `run` are sent to `py`.
TEST_F(BadInput, AuditsRefusedAtTheirPlanSayWhyAndLeaveNoJournal) {
  for (const auto& axis : {"compile=default", "seed_random=off,on", "python_hash_seed=0", "loader_workers=2"}) {
    const std::string name = std::string(axis).substr(0, std::string(axis).find('='));
    expect_rejected(std::string("run --device cpu --probe sum/f32 --no-cost --axis ") + axis,
                    "--axis " + name + ": " + name + " is a setting of py cells only (`repro-audit py`)");
  }
  expect_rejected("run --device cpu --config " + write("axes.yaml", "probes: [sum]\naxes:\n  compile: [default]\n"),
                  "the config's axis compile: compile is a setting of py cells only");
  EXPECT_FALSE(fs::exists(folder_ / "journals")) << "a refused audit leaves no journal";
  // A plan refused once the audit's journal was made (a collective with no ranks to run) takes it along.
  expect_rejected("run --device cpu --kind collective --axis ranks=1 --repeats 2 --no-cost",
                  "is a collective, and no flag set has ranks of 2 or more", "env XDG_STATE_HOME=" + path("state"));
  EXPECT_TRUE(!fs::exists(folder_ / "state/repro-audit/journals") ||
              fs::is_empty(folder_ / "state/repro-audit/journals"));
  // Callables are audited by `py`, whatever command was given them.
  const auto callables = write("callables.yaml", "models:\n  - callable: " + std::string(test_paths::kSourceDir) +
                                                     "/examples/py/train_step.py:make\n");
  expect_rejected("run --config " + callables,
                  callables + " names Python callables: audit them with `repro-audit py --config " + callables + "`");
}

// A NUL in a value would cut every message that quotes it; a quote left open is no value running to the
// end of the file. Both are refused where they are, in a config and a gate policy alike.
TEST_F(BadInput, ANulInAValueAndAnOpenQuoteAreRefusedWhereTheyAre) {
  const auto nul = write("nul.yaml", "probes: [\"sum\\0zzz\"]\n");
  expect_rejected("run --config " + nul, nul + ":1:10: a value holds a NUL character");
  const auto open = write("open.yaml", "repeats: \"3\n");
  expect_rejected("run --config " + open, open + ":1:10: a quoted value opens here and is never closed");
  const auto policy = write("policy.yaml", "fail_on: ['SLOWER\n");
  const auto report = small_report();
  expect_rejected("gate --baseline " + report + " --report " + report + " --policy " + policy,
                  "a quoted value opens here and is never closed");
  const auto quoted = write("quoted.yaml", "profiles: ['it''s', \"a\\\"b\"]\n");
  expect_rejected("run --config " + quoted, "unknown profile 'it's'");
}

TEST_F(BadInput, AJournalHeaderIsValidatedLikeAConfig) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run("run " + kSmallAudit + " --no-cost --journal " + journal.string()).exit_code, 0);
  const auto header_path = journal / "audit.json";
  const auto header = json::parse(slurp(header_path));
  const std::pair<std::string, std::string> edits[] = {
      {"/config/probes/0/probe", "unknown probe 'no_such_probe'"},
      {"/config/profiles/0", "unknown profile 'no_such_probe'"},
      {"/device", "invalid device 'no_such_probe'"},
  };
  for (const auto& [pointer, message] : edits) {
    auto edited = header;
    edited[json::json_pointer(pointer)] = "no_such_probe";
    std::ofstream(header_path) << edited.dump();
    expect_rejected("run --resume " + journal.string(), message);
  }
  auto edited = header;
  edited["config"]["repeats"] = "many";
  std::ofstream(header_path) << edited.dump();
  expect_rejected("run --resume " + journal.string(), "malformed config");
}

TEST_F(BadInput, HugeDeepOrExplodingInputsAreCappedNotFollowed) {
  const auto report = small_report();
  const auto deep =
      write("deep.json", "{\"schema\": \"repro-audit.report/1\", \"cells\": " + std::string(1000000, '[') +
                             std::string(1000000, ']') + "}");
  for (const auto& command : {"show " + deep, "baseline " + deep + " -o " + path("b.yaml"),
                              "compare " + deep + " " + report, "gate --baseline " + report + " --report " + deep}) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output.substr(0, 2000);
  }
  std::string bomb = "schema: repro-audit.baseline/1\nenvironment:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 10; ++level)
    bomb += "  a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + [&] {
      std::string items;
      for (int i = 0; i < 10; ++i) items += (i ? ", *a" : "*a") + std::to_string(level - 1);
      return items;
    }() + "]\n";
  bomb += "cells: {}\n";
  expect_rejected("gate --baseline " + write("bomb.yaml", bomb) + " --report " + report, "bomb.yaml", "timeout 120");
  expect_rejected("run --config /dev/zero", "/dev/zero", "timeout 120");
}

TEST_F(BadInput, EnvironmentMistakesAreExitTwoWithThePathAndTheReason) {
  write("a-file", "x");
  expect_rejected("run " + kSmallAudit + " --journal " + path("a-file"), "a-file: not a folder");
  expect_rejected("run " + kSmallAudit, path("a-file"), "XDG_STATE_HOME=" + path("a-file") + "/state");
  const auto missing = "the temporary folder " + path("missing") + " (TMPDIR) is missing";
  expect_rejected("run " + kSmallAudit, missing, "TMPDIR=" + path("missing"));
  expect_rejected("gate --baseline " + small_report() + " --config " + write("c.yaml", "repeats: 2\n"), missing,
                  "TMPDIR=" + path("missing"));
}

}  // namespace

namespace {

using namespace testing_cli;

class Budget : public CliTest {};

TEST_F(Budget, ABudgetIsSharedAndSaidAndABadOneIsRefused) {
  const auto report = path("budget.json");
  const auto result = run(
      "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 50 --budget 1s --json " + report);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("budget 1s: "), std::string::npos) << result.output;
  const auto cell = nlohmann::json::parse(slurp(report)).at("cells").at(0);
  EXPECT_GT(cell.at("budget_seconds").get<double>(), 0.0);
  EXPECT_FALSE(cell.at("observations").at(0).contains("timing_rounds"));  // a budget pays for one round
  const auto rounds = run("run --device cpu --probe sum/f32 --budget 1m --timing-rounds 3");
  EXPECT_EQ(rounds.exit_code, 2) << rounds.output;
  EXPECT_NE(rounds.output.find("--timing-rounds: under --budget"), std::string::npos) << rounds.output;
  EXPECT_EQ(run("run --device cpu --probe sum/f32 --timing-rounds 0").exit_code, 2);
  const auto no_cost = path("no-cost.json");  // no costs asked for: no timing-only runs, as quick as it gets
  ASSERT_EQ(
      run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 3 --no-cost --json " + no_cost)
          .exit_code,
      0);
  const auto quick = nlohmann::json::parse(slurp(no_cost)).at("cells").at(0);
  for (const auto& observation : quick.at("observations")) {
    EXPECT_FALSE(observation.contains("timing_rounds"));
    EXPECT_TRUE(observation.value("timing_ns", nlohmann::json::array()).empty()) << observation.dump();
    EXPECT_EQ(observation.at("runs").size(), 4u);  // the warm-up and 3 repeats, timed as always
  }
  EXPECT_GT(quick.at("timing").at("median_ns").get<double>(), 0.0);  // from the determinism runs
  const auto rounds_of_two = path("two.json");
  ASSERT_EQ(run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 3 --timing-rounds 2 "
                "--json " +
                rounds_of_two)
                .exit_code,
            0);
  EXPECT_EQ(nlohmann::json::parse(slurp(rounds_of_two)).at("cells").at(0).at("observations").at(0).at("timing_rounds"),
            2);
  for (const auto* bad : {"abc", "0", "2x", "1.5d"}) {
    const auto refused = run(std::string("run --device cpu --probe sum/f32 --budget ") + bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << "\n" << refused.output;
    EXPECT_NE(refused.output.find("expected a positive duration such as 90s, 2m or 1h"), std::string::npos)
        << refused.output;
  }
}

}  // namespace
