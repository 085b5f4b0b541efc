#include "compare/baseline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

#include "common/user_error.h"
#include "hostile_inputs.h"
#include "common/atomic_file.h"
#include "report/json_io.h"
#include "sample_reports.h"

namespace repro_audit {
namespace {

using testing::baseline_error;

// The current schema's line: the hostile inputs below hold whatever version is current.
std::string schema_line() { return std::string("schema: ") + kBaselineSchema + "\n"; }

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("repro-audit-baseline-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST(Baseline, KeepsVerdictDigestsAndTimingPerCell) {
  const auto baseline = baseline_from_report(testing::sample_report());
  ASSERT_EQ(baseline.cells.size(), 8u);
  const auto& sum = baseline.cells[0];
  EXPECT_EQ(sum.key, "sum/f32@cpu|threads=1");
  EXPECT_EQ(sum.verdict, VerdictKind::deterministic);
  EXPECT_EQ(sum.digest, "a1b2c3d4e5f60718293a4b5c6d7e8f90");
  EXPECT_EQ(sum.kernel_digest, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(sum.timing.median_ns, 1000000);
  EXPECT_EQ(sum.timing.p10_ns, 950000);
  EXPECT_EQ(sum.timing.p90_ns, 1100000);
  EXPECT_TRUE(baseline.cells[2].kernels_varied);
  EXPECT_EQ(baseline.environment.at("torch"), "2.14.1");
}

TEST(Baseline, YamlRoundTripKeepsEveryField) {
  auto report = testing::sample_report();
  // Strings that a plain YAML scalar would turn into numbers, booleans or null must stay strings.
  report.environment["torch"] = "2.0";
  report.environment["os"] = "true";
  report.environment["empty"] = "";
  report.environment["ratio"] = 0.1;
  report.environment["nothing"] = nullptr;
  report.cells[0].verdict.digest = "12345678901234567890123456789e12";  // hex, and a float to YAML
  const auto baseline = baseline_from_report(report);
  const auto yaml = baseline_to_yaml(baseline);
  EXPECT_EQ(yaml.rfind("schema: repro-audit.baseline/2\n", 0), 0u) << yaml;
  const auto loaded = parse_baseline(yaml, "base.yaml");
  EXPECT_EQ(loaded.environment, baseline.environment);
  EXPECT_EQ(loaded.tool_version, "0.1.0");
  ASSERT_EQ(loaded.cells.size(), baseline.cells.size());
  for (std::size_t i = 0; i < loaded.cells.size(); ++i) {
    const auto &a = loaded.cells[i], &b = baseline.cells[i];
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.verdict, b.verdict);
    EXPECT_EQ(a.digest, b.digest);
    EXPECT_EQ(a.kernel_digest, b.kernel_digest);
    EXPECT_EQ(a.kernels_varied, b.kernels_varied);
    EXPECT_EQ(a.timing.median_ns, b.timing.median_ns);
    EXPECT_EQ(a.timing.p10_ns, b.timing.p10_ns);
    EXPECT_EQ(a.timing.p90_ns, b.timing.p90_ns);
    EXPECT_EQ(a.timing.samples, b.timing.samples);
    EXPECT_TRUE(a.message.empty()) << "messages stay out of baselines";
  }
  EXPECT_EQ(baseline_to_yaml(loaded), yaml);
}

// The scheme that made the inputs travels with the digests; a baseline that records none was made
// before it was recorded, with ATen's generator.
TEST(Baseline, KeepsTheInputSchemeAndReadsOlderBaselinesAsAtensGenerator) {
  auto report = testing::sample_report();
  report.config["input_scheme"] = 2;
  const auto yaml = baseline_to_yaml(baseline_from_report(report));
  EXPECT_NE(yaml.find("\ninput_scheme: 2\n"), std::string::npos) << yaml;
  EXPECT_EQ(parse_baseline(yaml, "base.yaml").input_scheme, InputScheme::portable);
  report.config.erase("input_scheme");
  EXPECT_EQ(baseline_from_report(report).input_scheme, InputScheme::aten);
  const std::string head = "schema: repro-audit.baseline/2\n";
  EXPECT_EQ(parse_baseline(head + "cells: {}\n", "base.yaml").input_scheme, InputScheme::aten);
  EXPECT_EQ(parse_baseline(head + "input_scheme: 1\ncells: {}\n", "base.yaml").input_scheme, InputScheme::aten);
  for (const auto* bad : {"3", "02", "[2]", "two"})
    EXPECT_NE(baseline_error(head + "input_scheme: " + bad + "\n").find("base.yaml:2:15: input_scheme"),
              std::string::npos)
        << baseline_error(head + "input_scheme: " + bad + "\n");
  EXPECT_NE(baseline_error(head + "input_scheme: 3\n").find("is not one of: 1 (ATen's generator), 2 (portable)"),
            std::string::npos);
}

TEST(Baseline, EmptyReportGivesALoadableBaseline) {
  Report report;
  const auto loaded = parse_baseline(baseline_to_yaml(baseline_from_report(report)), "b.yaml");
  EXPECT_TRUE(loaded.cells.empty());
}

TEST(Baseline, WrongOrMissingSchemaNamesFileLineColumn) {
  EXPECT_NE(baseline_error("cells: {}\n")
                .find("base.yaml:1:1: not a repro-audit baseline: missing 'schema: repro-audit.baseline/2'"),
            std::string::npos)
      << baseline_error("cells: {}\n");
  EXPECT_NE(
      baseline_error("tool_version: x\nschema: repro-audit.baseline/3\n")
          .find("base.yaml:2:9: schema 'repro-audit.baseline/3' is not supported; expected 'repro-audit.baseline/2' "
                "(or 'repro-audit.baseline/1')"),
      std::string::npos);
  EXPECT_NE(baseline_error("- a\n- b\n").find("base.yaml:1:1: not a repro-audit baseline"), std::string::npos);
  EXPECT_NE(baseline_error("schema: [unclosed\n").find("base.yaml:2:"), std::string::npos)
      << baseline_error("schema: [unclosed\n");
}

TEST(Baseline, UnknownKeysFieldsAndVerdictsNameTheValidChoices) {
  const std::string head = "schema: repro-audit.baseline/2\n";
  EXPECT_NE(
      baseline_error(head + "cels: {}\n")
          .find(
              "base.yaml:2:1: unknown key 'cels'; valid keys: schema, tool_version, input_scheme, environment, cells"),
      std::string::npos);
  EXPECT_NE(
      baseline_error(head + "cells:\n  a/b@cpu|x=1:\n    verdict: flaky\n")
          .find("base.yaml:4:14: unknown verdict 'flaky'; valid verdicts: deterministic, nondeterministic, warns"),
      std::string::npos)
      << baseline_error(head + "cells:\n  a/b@cpu|x=1:\n    verdict: flaky\n");
  EXPECT_NE(baseline_error(head + "cells:\n  k:\n    verdict: deterministic\n    median: 3\n")
                .find("base.yaml:5:5: unknown cell field 'median'; valid fields: verdict, digest, kernel_digest"),
            std::string::npos);
  EXPECT_NE(baseline_error(head + "cells:\n  k:\n    verdict: deterministic\n    median_ns: fast\n")
                .find("base.yaml:5:16: median_ns must be a non-negative integer, not 'fast'"),
            std::string::npos);
  EXPECT_NE(baseline_error(head + "cells:\n  k:\n    digest: 0123456789abcdef0123456789abcdef\n")
                .find("base.yaml:4:5: cell 'k' has no verdict"),
            std::string::npos);
  EXPECT_NE(baseline_error(head + "cells:\n  k: {verdict: raises}\n  k: {verdict: raises}\n")
                .find("base.yaml:4:3: duplicate key 'k' (first at line 3)"),
            std::string::npos);
}

TEST(Baseline, DigestsMustBeThirtyTwoLowerCaseHexDigits) {
  const std::string head = schema_line() + "cells:\n  sum/f32@cpu:\n    verdict: deterministic\n";
  for (const auto& bad :
       {std::string("0123456789ABCDEF0123456789ABCDEF"), std::string(31, 'a'), std::string(32, 'g')}) {
    EXPECT_EQ(baseline_error(head + "    digest: " + bad + "\n"),
              "base.yaml:5:13: digest '" + bad + "' is not 32 lower-case hex digits");
    EXPECT_EQ(baseline_error(head + "    kernel_digest: " + bad + "\n"),
              "base.yaml:5:20: kernel_digest '" + bad + "' is not 32 lower-case hex digits");
  }
  EXPECT_EQ(baseline_error(head + "    digest: 0123456789abcdef0123456789abcdef\n"), "no error");
}

TEST(Baseline, DuplicateKeysAreErrorsAtTheSecondOne) {
  const std::string head = schema_line();
  EXPECT_EQ(baseline_error(head + schema_line()), "base.yaml:2:1: duplicate key 'schema' (first at line 1)");
  EXPECT_EQ(baseline_error(head + "cells:\n  k:\n    verdict: raises\n    verdict: error\n"),
            "base.yaml:5:5: duplicate key 'verdict' (first at line 4)");
  EXPECT_EQ(baseline_error(head + "environment: {cuda: {driver: 1, driver: 2}}\n"),
            "base.yaml:2:33: duplicate key 'driver' (first at line 2)");
}

TEST(Baseline, ASecondDocumentIsAnError) {
  const std::string one = schema_line() + "cells: {}\n";
  EXPECT_EQ(baseline_error(one + "---\n" + one),
            "base.yaml:3:1: a second YAML document starts here; the file must hold one document");
}

TEST(Baseline, DeepNestingAndAliasBombsStopAtLoad) {
  EXPECT_EQ(baseline_error(schema_line() + "environment: {a: " + testing::nested_lists(100000) + "}\n"),
            "base.yaml:2:80: YAML nested deeper than 64 levels");
  const auto bomb = baseline_error(schema_line() + "environment:\n" + testing::alias_bomb("  "));
  EXPECT_NE(bomb.find("aliases expand to more than"), std::string::npos) << bomb;
  EXPECT_EQ(bomb.rfind("base.yaml:7:", 0), 0u) << bomb;
}

TEST(Baseline, AliasesWithinBoundsReadAsWhatTheyName) {
  const auto loaded = parse_baseline(
      schema_line() +
          "environment:\n  a: &x {k: [1, '2']}\n  b: *x\n"
          "cells:\n  sum/f32@cpu: &cell {verdict: deterministic, digest: 0123456789abcdef0123456789abcdef}\n"
          "  sum/f64@cpu: *cell\n",
      "base.yaml");
  EXPECT_EQ(loaded.environment, nlohmann::json::parse(R"({"a": {"k": [1, "2"]}, "b": {"k": [1, "2"]}})"));
  ASSERT_EQ(loaded.cells.size(), 2u);
  EXPECT_EQ(loaded.cells[1].key, "sum/f64@cpu");
  EXPECT_EQ(loaded.cells[1].digest, "0123456789abcdef0123456789abcdef");
}

TEST(Baseline, MistakesBeforeTheSchemaWaitForIt) {
  // A file without a schema is not a baseline, whatever else is wrong in it; with one, the first mistake.
  EXPECT_NE(
      baseline_error("cells:\n  k: {verdict: flaky}\n").find("base.yaml:1:1: not a repro-audit baseline: missing"),
      std::string::npos);
  EXPECT_EQ(baseline_error("cells:\n  k: {verdict: flaky}\ntools: 1\n" + schema_line())
                .rfind("base.yaml:2:16: unknown verdict 'flaky'", 0),
            0u);
}

// The cells stream through one at a time; each arrives, in order.
TEST(Baseline, ALargeBaselineLoadsEveryCellInOrder) {
  Baseline baseline;
  for (int i = 0; i < 5000; ++i)
    baseline.cells.push_back({"sum/f32@cpu|seed=" + std::to_string(i), VerdictKind::deterministic,
                              fmt::format("{:032x}", i), "", false, testing::timing(1000 + i, 900, 1100), ""});
  const auto loaded = parse_baseline(baseline_to_yaml(baseline), "base.yaml");
  ASSERT_EQ(loaded.cells.size(), baseline.cells.size());
  for (std::size_t i = 0; i < loaded.cells.size(); ++i) {
    ASSERT_EQ(loaded.cells[i].key, baseline.cells[i].key);
    ASSERT_EQ(loaded.cells[i].digest, baseline.cells[i].digest);
    ASSERT_EQ(loaded.cells[i].timing.median_ns, baseline.cells[i].timing.median_ns);
  }
}

TEST_F(TempDir, AFolderIsAnErrorNotAnEmptyBaseline) {
  auto message = [](auto load) {
    try {
      load();
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { load_baseline_file(dir_.string()); }),
            dir_.string() + ": cannot read the baseline: Is a directory");
  EXPECT_EQ(message([&] { load_comparable(dir_.string()); }),
            dir_.string() + ": cannot read the report or baseline: Is a directory");
}

TEST_F(TempDir, DeeplyNestedComparablesAreErrorsNotCrashes) {
  write_file_atomically(path("deep.json"), std::string("{\"schema\": \"") + kReportSchema +
                                               "\", \"cells\": " + testing::nested_lists(100000) + "}");
  write_file_atomically(path("deep.yaml"), "a: " + testing::nested_lists(100000));
  auto message = [](const std::string& file) {
    try {
      load_comparable(file);
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(path("deep.json")), path("deep.json") + ": byte 108: JSON nested deeper than 64 levels");
  EXPECT_EQ(message(path("deep.yaml")), path("deep.yaml") + ":1:67: YAML nested deeper than 64 levels");
}

TEST_F(TempDir, WritesAtomicallyAndLoadsBack) {
  const auto baseline = baseline_from_report(testing::sample_report());
  write_baseline_file(baseline, path("base.yaml"));
  const auto loaded = load_baseline_file(path("base.yaml"));
  EXPECT_EQ(loaded.source, path("base.yaml"));
  EXPECT_EQ(loaded.cells.size(), baseline.cells.size());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), std::filesystem::directory_iterator()), 1)
      << "no temporary file left behind";
}

TEST_F(TempDir, LoadComparableReadsReportsAndBaselines) {
  const auto report = testing::sample_report();
  write_file_atomically(path("report.json"), report_to_json(report).dump(2));
  write_baseline_file(baseline_from_report(report), path("base.yaml"));
  const auto from_report = load_comparable(path("report.json"));
  const auto from_baseline = load_comparable(path("base.yaml"));
  EXPECT_EQ(from_report.source, path("report.json"));
  ASSERT_EQ(from_report.cells.size(), from_baseline.cells.size());
  EXPECT_EQ(from_report.cells[5].verdict, VerdictKind::crashed);
  EXPECT_EQ(from_report.cells[5].message, "SIGSEGV in <cudnn> & friends");
  EXPECT_EQ(from_report.environment, from_baseline.environment);
  for (std::size_t i = 0; i < from_report.cells.size(); ++i) {
    EXPECT_EQ(from_report.cells[i].key, from_baseline.cells[i].key);
    EXPECT_EQ(from_report.cells[i].digest, from_baseline.cells[i].digest);
  }
}

TEST_F(TempDir, LoadComparableRejectsOtherFiles) {
  write_file_atomically(path("other.json"), R"({"schema": "something/1"})");
  write_file_atomically(path("broken.json"), "{\"schema\": ");
  write_file_atomically(path("config.yaml"), "device: cpu\n");
  auto message = [](const std::string& file) {
    try {
      load_comparable(file);
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(path("other.json")).find("neither a repro-audit report"), std::string::npos);
  EXPECT_NE(message(path("broken.json")).find("invalid JSON"), std::string::npos);
  EXPECT_NE(message(path("config.yaml")).find("config.yaml:1:1: not a repro-audit baseline"), std::string::npos);
  EXPECT_NE(message(path("absent.yaml")).find("cannot read"), std::string::npos);
}

TEST(Baseline, ReproducibleDivergingAndBrokenFollowTheVerdict) {
  SnapshotCell cell;
  cell.verdict = VerdictKind::warns;
  EXPECT_TRUE(is_diverging(cell));
  cell.digest = "d";
  EXPECT_TRUE(is_reproducible(cell));
  cell.verdict = VerdictKind::timeout;
  EXPECT_TRUE(is_broken(cell));
  EXPECT_FALSE(is_reproducible(cell));
  cell.verdict = VerdictKind::raises;
  EXPECT_FALSE(is_broken(cell) || is_diverging(cell) || is_reproducible(cell));
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

int handled_signal = 0;
void note_signal(int signal) { handled_signal = signal; }

// A SIGTERM while outputs are written waits until they are all in place, then reaches the handler
// that was there before.
TEST(DeferredSignals, HoldASignalUntilTheOutputsAreWritten) {
  struct sigaction note {
  }, previous{};
  note.sa_handler = note_signal;
  sigemptyset(&note.sa_mask);
  sigaction(SIGTERM, &note, &previous);
  handled_signal = 0;
  {
    const DeferredSignals held;
    {
      const DeferredSignals nested;
      ::raise(SIGTERM);
    }
    EXPECT_EQ(handled_signal, 0) << "a nested hold let the signal through";
  }
  EXPECT_EQ(handled_signal, SIGTERM);
  sigaction(SIGTERM, &previous, nullptr);
}

TEST(DeferredSignals, WritingManyFilesLeavesNoTemporaryAndKeepsTheOthersWhenOneFails) {
  const auto folder = std::filesystem::temp_directory_path() / ("repro-audit-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto failures = write_files_atomically({{(folder / "a.json").string(), "a"},
                                                {(folder / "missing/b.json").string(), "b"},
                                                {(folder / "c.json").string(), "c"}});
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("missing/b.json"), std::string::npos);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a.json", "c.json"}));
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace repro_audit
