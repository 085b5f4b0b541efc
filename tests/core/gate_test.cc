#include "compare/gate_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "compare/comparison_terminal.h"
#include "compare/comparison_text.h"
#include "common/user_error.h"
#include "hostile_inputs.h"
#include "common/atomic_file.h"
#include "report/json_io.h"
#include "sample_reports.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

using testing::cell;
using testing::report_of;
using testing::timing;

GateResult gate(const Report& before, const Report& after, const GatePolicy& policy = default_gate_policy()) {
  const auto comparison = compare_snapshots(baseline_from_report(before, "base.yaml"),
                                            baseline_from_report(after, "r.json"), {policy.slower_threshold});
  return gate_outcome(comparison, policy);
}

// One report pair per class, built from crafted cells; `after` differs from `before` in one way.
struct Scenario {
  Change change;
  CellReport before;
  CellReport after;  // verdict kind `unsupported` with an empty key means "absent"
};

std::vector<Scenario> one_scenario_per_class() {
  const std::string column = "default threads=1";
  auto det = [&](const std::string& digest, const Timing& time = timing(1000000, 950000, 1050000)) {
    return cell("sum", "f32", column, VerdictKind::deterministic, digest, time);
  };
  auto kernels = [&](const std::string& kernel_digest) {
    auto result = det("d1");
    result.verdict.kernel_digest = kernel_digest;
    return result;
  };
  auto kind = [&](VerdictKind verdict) { return cell("sum", "f32", column, verdict); };
  return {
      {Change::same, det("d1"), det("d1")},
      {Change::new_nondeterminism, det("d1"), kind(VerdictKind::nondeterministic)},
      {Change::fixed, kind(VerdictKind::nondeterministic), det("d1")},
      {Change::drift, det("d1"), det("d2")},
      {Change::kernels_changed, kernels("k1"), kernels("k2")},
      {Change::slower, det("d1"), det("d1", timing(1500000, 1400000, 1600000))},
      {Change::faster, det("d1", timing(1500000, 1400000, 1600000)), det("d1")},
      {Change::broke, det("d1"), kind(VerdictKind::timeout)},
      {Change::missing, det("d1"), CellReport{}},
      {Change::added, CellReport{}, det("d1")},
  };
}

Report single(const CellReport& cell) { return cell.cell.key.empty() ? report_of({}) : report_of({cell}); }

TEST(Gate, EveryClassGetsItsDefaultActionAndExitCode) {
  const auto policy = default_gate_policy();
  for (const auto& scenario : one_scenario_per_class()) {
    const auto result = gate(single(scenario.before), single(scenario.after));
    const auto expected = action_for(policy, false, scenario.change);
    SCOPED_TRACE(to_string(scenario.change));
    EXPECT_EQ(result.failures.size(), expected == GateAction::fail ? 1u : 0u);
    EXPECT_EQ(result.warnings.size(), expected == GateAction::warn ? 1u : 0u);
    EXPECT_EQ(gate_exit_code(result), expected == GateAction::fail ? 1 : 0);
    const auto& findings = expected == GateAction::fail ? result.failures : result.warnings;
    if (!findings.empty()) EXPECT_EQ(findings[0].triggers, std::vector<Change>{scenario.change});
  }
}

TEST(Gate, EveryScenarioProducesItsClass) {
  for (const auto& scenario : one_scenario_per_class()) {
    const auto comparison =
        compare_snapshots(baseline_from_report(single(scenario.before)), baseline_from_report(single(scenario.after)));
    ASSERT_EQ(comparison.cells.size(), 1u);
    EXPECT_EQ(comparison.cells[0].changes, std::vector<Change>{scenario.change}) << to_string(scenario.change);
  }
}

TEST(Gate, WarningsAloneStillPass) {
  auto before =
      cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d1", timing(1000000, 950000, 1050000));
  auto after =
      cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d1", timing(1500000, 1400000, 1600000));
  before.verdict.kernel_digest = "k1";
  after.verdict.kernel_digest = "k2";
  const auto result = gate(report_of({before}), report_of({after}));
  EXPECT_TRUE(result.passed);
  EXPECT_EQ(gate_exit_code(result), 0);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].triggers, (std::vector<Change>{Change::kernels_changed, Change::slower}));
}

TEST(Gate, DriftWarnsAfterAPlatformChangeAndFailsWithout) {
  const auto before = report_of({cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d1")});
  auto after = report_of({cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d2")});
  EXPECT_EQ(gate_exit_code(gate(before, after)), 1);
  after.environment["cuda"]["cudnn"] = 92500;
  const auto result = gate(before, after);
  EXPECT_TRUE(result.platform_changed);
  EXPECT_EQ(gate_exit_code(result), 0);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].triggers, std::vector<Change>{Change::drift});
}

TEST(Gate, ThePolicyThresholdDecidesSlower) {
  const auto before = report_of(
      {cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d1", timing(1000000, 950000, 1050000))});
  const auto after = report_of(
      {cell("sum", "f32", "default threads=1", VerdictKind::deterministic, "d1", timing(1500000, 1400000, 1600000))});
  auto policy = parse_gate_policy("fail: [SLOWER]\n", "gate.yaml");
  EXPECT_FALSE(gate(before, after, policy).passed);
  policy.slower_threshold = 0.60;
  EXPECT_TRUE(gate(before, after, policy).passed);
}

class GateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("repro-audit-gate-" + std::to_string(getpid()) + "-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(GateFiles, ReportToBaselineToGateOnTheSameReportPasses) {
  const auto report = testing::sample_report();
  write_file_atomically(path("report.json"), report_to_json(report).dump(2));
  write_baseline_file(baseline_from_report(load_report_file(path("report.json"))), path("base.yaml"));
  const auto comparison = compare_snapshots(load_comparable(path("base.yaml")), load_comparable(path("report.json")));
  EXPECT_FALSE(comparison.platform_changed);
  for (const auto& cell : comparison.cells) EXPECT_EQ(cell.changes, std::vector<Change>{Change::same}) << cell.key;
  const auto result = gate_outcome(comparison, default_gate_policy());
  EXPECT_TRUE(result.passed);
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(gate_exit_code(result), 0);
}

TEST_F(GateFiles, OneChangedDigestIsDriftAndFailsTheGate) {
  auto report = testing::sample_report();
  write_baseline_file(baseline_from_report(report), path("base.yaml"));
  report.cells[1].verdict.digest = "ffffffffffffffffffffffffffffffff";
  write_file_atomically(path("report.json"), report_to_json(report).dump(2));
  const auto comparison = compare_snapshots(load_comparable(path("base.yaml")), load_comparable(path("report.json")));
  const auto result = gate_outcome(comparison, default_gate_policy());
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].key, report.cells[1].cell.key);
  EXPECT_EQ(result.failures[0].triggers, std::vector<Change>{Change::drift});
  EXPECT_EQ(result.failures[0].detail, "digest a1b2c3d4e5f6 -> ffffffffffff");
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(gate_exit_code(result), 1);
}

// A full version-2 fingerprint of a host whose CPU runs AVX2 and no AVX-512, with the same model name
// as the fixture's "AMD EPYC".
// The sample host as the user's: its own model string and OS, nothing set, no cuDNN or device list.
nlohmann::json avx2_host_fingerprint() {
  auto environment = testing::sample_environment();
  environment["cpu"] = "AMD EPYC";
  environment["os"] = "Linux 6.18.44-fc-v669";
  environment["numerics_environment"] = nlohmann::json::object();
  environment["cuda"].erase("cudnn");
  environment["cuda"].erase("devices");
  return environment;
}

// The report an audit writes: the snapshot's cells as they were, under another environment.
Report report_from(const Snapshot& snapshot, const nlohmann::json& environment) {
  Report report;
  report.tool_version = snapshot.tool_version;
  report.environment = environment;
  report.device = "cpu";
  for (const auto& cell : snapshot.cells) {
    CellReport result;
    result.cell.key = cell.key;
    result.cell.probe = probe_of_key(cell.key);
    result.cell.variant =
        cell.key.substr(result.cell.probe.size() + 1, cell.key.find('@') - result.cell.probe.size() - 1);
    result.cell.device = "cpu";
    result.verdict.kind = cell.verdict;
    result.verdict.digest = cell.digest;
    result.verdict.kernel_digest = cell.kernel_digest;
    result.verdict.kernels_varied = cell.kernels_varied;
    result.verdict.timing = cell.timing;
    result.verdict.digests_agree = !cell.digest.empty();
    report.cells.push_back(result);
  }
  return report;
}

// A baseline recorded before the fingerprint named the ISA (tests/core/fixtures: never edit it), gated
// on a host with another instruction set: the platform counts as changed, naming what the baseline
// does not record, so DRIFT warns instead of failing.
TEST_F(GateFiles, ABaselineWithoutTheIsaCountsThePlatformAsPossiblyChanged) {
  const std::string baseline_path =
      std::string(test_paths::kFixtureDir) + "/baseline-v2-cpu-amd-epyc-before-fingerprint.yaml";
  const auto baseline = load_comparable(baseline_path);
  ASSERT_FALSE(baseline.environment.contains("cpu_flags"));
  auto report = report_from(baseline, avx2_host_fingerprint());
  auto drifted = std::find_if(report.cells.begin(), report.cells.end(), [](const CellReport& cell) {
    return cell.verdict.kind == VerdictKind::deterministic && !cell.verdict.digest.empty();
  });
  ASSERT_NE(drifted, report.cells.end());
  drifted->verdict.digest = "ffffffffffffffffffffffffffffffff";
  write_file_atomically(path("report.json"), report_to_json(report).dump(2));

  const auto policy = default_gate_policy();
  const auto comparison = compare_snapshots(baseline, load_comparable(path("report.json")), {policy.slower_threshold});
  EXPECT_TRUE(comparison.platform_changed);
  EXPECT_EQ(platform_sentence(comparison),
            "Platform changed: not recorded in " + baseline_path +
                ": torch git, CPU id, CPU flags, ATen capability, ATen capabilities, BLAS, MKL, oneDNN, OpenMP, "
                "interop threads (counted as possibly changed); the changed_platform rules apply (by default DRIFT "
                "warns instead of failing).");
  for (const auto& change : comparison.environment_changes) {
    EXPECT_TRUE(change.unknown) << change.field << ": the fields both record are equal";
    EXPECT_EQ(change.before, "") << change.field;
  }
  const auto result = gate_outcome(comparison, policy);
  EXPECT_TRUE(result.passed);
  EXPECT_EQ(gate_exit_code(result), 0);
  EXPECT_TRUE(result.failures.empty());
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].key, drifted->cell.key);
  EXPECT_EQ(result.warnings[0].triggers, std::vector<Change>{Change::drift});
  std::ostringstream out;
  print_comparison(comparison, &result, out);
  EXPECT_NE(out.str().find("  CPU flags          unknown       not recorded -> avx avx2 f16c fma sse4_1 sse4_2\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("  fingerprint        not platform  not recorded -> 2\n"), std::string::npos);

  // The same drift on the baseline's own environment fails: the unknown fields made the difference.
  const auto same_host =
      compare_snapshots(baseline, baseline_from_report(report_from(baseline, baseline.environment), "r.json"));
  EXPECT_FALSE(same_host.platform_changed);
  auto drifted_again = report_from(baseline, baseline.environment);
  for (auto& cell : drifted_again.cells)
    if (cell.cell.key == drifted->cell.key) cell.verdict.digest = drifted->verdict.digest;
  EXPECT_FALSE(gate_outcome(compare_snapshots(baseline, baseline_from_report(drifted_again, "r.json")), policy).passed);
}

TEST_F(GateFiles, PolicyFileErrorsAndLoading) {
  write_file_atomically(path("gate.yaml"), "warn: [SLOWER]\nfail: [DRIFT, NEW-NONDETERMINISM]\n");
  const auto policy = load_gate_policy_file(path("gate.yaml"));
  EXPECT_EQ(policy.source, path("gate.yaml"));
  EXPECT_EQ(action_for(policy, true, Change::drift), GateAction::fail);
  EXPECT_THROW(load_gate_policy_file(path("absent.yaml")), UserError);
}

TEST_F(GateFiles, APolicyThatCannotBeReadIsAnErrorNotTheDefaults) {
  try {
    load_gate_policy_file(dir_.string());
    FAIL() << "a folder was taken for a policy";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), dir_.string() + ": cannot read the gate policy: Is a directory");
  }
}

// Printing looked each cell's finding up in the list of findings, within a sort: quadratic.
// The same change of one probe/variant@device under several flag sets is one line; the gate still
// counts every cell.
TEST(Gate, OneChangeUnderSeveralFlagSetsIsOneLine) {
  std::vector<CellReport> before, after;  // 4 threads: another digest, another line
  for (const auto& [column, threads, digest] : {std::tuple{"default threads=1", "1", 'b'},
                                                {"strict threads=1", "1", 'b'},
                                                {"default threads=1", "2", 'b'},
                                                {"default threads=1", "4", 'c'}}) {
    before.push_back(
        testing::with_threads(cell("sum", "f32", column, VerdictKind::deterministic, std::string(32, 'a')), threads));
    after.push_back(testing::with_threads(
        cell("sum", "f32", column, VerdictKind::deterministic, std::string(32, digest)), threads));
  }
  const auto comparison = compare_snapshots(baseline_from_report(report_of(before), "base.yaml"),
                                            baseline_from_report(report_of(after), "r.json"));
  const auto result = gate_outcome(comparison, default_gate_policy());
  EXPECT_EQ(result.failures.size(), 4u);
  std::ostringstream out;
  print_comparison(comparison, &result, out);
  const auto text = out.str();
  EXPECT_NE(text.find("Cells: 4 DRIFT"), std::string::npos);
  EXPECT_NE(text.find("  FAIL  DRIFT  sum/f32@cpu  (3 flag sets: threads=1, deterministic_algorithms=on,threads=1, "
                      "defaults)\n               digest aaaaaaaaaaaa -> bbbbbbbbbbbb\n"
                      "  FAIL  DRIFT  sum/f32@cpu|threads=4\n               digest aaaaaaaaaaaa -> cccccccccccc\n"),
            std::string::npos)
      << text;
}

TEST(Gate, ALargeGatePrintsEachFindingOnceAndInOrder) {
  const int count = 20000;
  std::vector<CellReport> before, after;
  for (int i = 0; i < count; ++i) {
    const auto variant = "v" + std::to_string(i);
    const auto digest = [&](char c) { return std::string(31, c) + static_cast<char>('0' + i % 10); };
    before.push_back(cell("sum", variant, "default threads=1", VerdictKind::deterministic, digest('a')));
    // Every third cell drifts (fails), the others get slower (warn).
    after.push_back(cell("sum", variant, "default threads=1", VerdictKind::deterministic,
                         i % 3 == 0 ? digest('b') : digest('a'),
                         i % 3 != 0 ? timing(2000000, 1900000, 2100000) : Timing{}));
    if (i % 3 != 0) before.back().verdict.timing = timing(1000000, 950000, 1050000);
  }
  const auto result = gate(report_of(before), report_of(after));
  std::ostringstream out;
  const auto comparison =
      compare_snapshots(baseline_from_report(report_of(before), "base.yaml"), baseline_from_report(report_of(after)));
  print_comparison(comparison, &result, out);
  const auto text = out.str();
  const auto fails = text.find("  FAIL  DRIFT"), warns = text.find("  WARN  SLOWER");
  ASSERT_NE(fails, std::string::npos);
  ASSERT_NE(warns, std::string::npos);
  EXPECT_LT(fails, warns) << "failures are listed before warnings";
  std::size_t listed = 0;
  for (auto at = text.find("\n  FAIL  "); at != std::string::npos; at = text.find("\n  FAIL  ", at + 1)) ++listed;
  EXPECT_EQ(listed, result.failures.size());
  EXPECT_EQ(result.failures.size(), static_cast<std::size_t>((count + 2) / 3));
  EXPECT_EQ(result.warnings.size(), static_cast<std::size_t>(count - (count + 2) / 3));
}

}  // namespace
}  // namespace repro_audit
