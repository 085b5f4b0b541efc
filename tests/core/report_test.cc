#include "report/report.h"

#include <gtest/gtest.h>

#include "report/json_io.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

ProcessObservation runs(const std::vector<std::string>& digests, std::int64_t time) {
  ProcessObservation observation;
  for (const auto& digest : digests) observation.runs.push_back({digest, {{"output", digest}}, false, time, ""});
  return observation;
}

// sum: deterministic per thread count but different bits for 1 and 2 threads;
// index_put_accumulate/f32: diverges by default with 2 threads.
Report sample_report() {
  Config config;
  config.probes = {{"sum", {}}, {"index_put_accumulate", {"f32"}}};
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  std::map<std::string, std::vector<ProcessObservation>> observations;
  for (const auto& cell : plan.cells) {
    const bool two = cell.settings.at("threads") == "2";
    const bool strict = cell.settings.at("deterministic_algorithms") != "off";
    if (cell.probe == "sum")
      observations[cell.key] = {runs({two ? "s2" : "s1", two ? "s2" : "s1"}, 100)};
    else if (two && !strict)
      observations[cell.key] = {runs({"x", "y", "z"}, 100)};
    else
      observations[cell.key] = {runs({"i", "i"}, strict ? 300 : 100)};
  }
  return build_report(plan, observations, testing::test_catalogue());
}

TEST(Report, NotesSettingsThatChangeTheBitsOfDeterministicCells) {
  const auto report = sample_report();
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0].probe, "sum");
  EXPECT_EQ(report.notes[0].setting, "threads");
  EXPECT_EQ(report.notes[0].values, (std::vector<std::string>{"1", "2"}));
}

TEST(Report, CostRatioAgainstTheDefaultProfileWithTheSameThreads) {
  const auto report = sample_report();
  const auto* strict = find_cell(
      report,
      "index_put_accumulate/f32@cpu|deterministic_algorithms=on,fill_uninitialized_memory=true,seed=0,threads=1");
  ASSERT_TRUE(strict);
  ASSERT_TRUE(strict->cost_ratio);
  EXPECT_DOUBLE_EQ(*strict->cost_ratio, 3.0);
}

TEST(Report, ExpectedDivergenceUnderDefaultDoesNotFailTheAudit) {
  auto report = sample_report();
  EXPECT_FALSE(audit_failed(report, "contradiction"));
  EXPECT_TRUE(audit_failed(report, "any"));
  for (auto& cell : report.cells)
    if (cell.cell.probe == "index_put_accumulate" && cell.cell.settings.at("deterministic_algorithms") == "on") {
      cell.verdict.kind = VerdictKind::nondeterministic;
      cell.verdict.digests_agree = false;
      cell.contradiction = find_contradiction(Documented::alternative_under_strict, cell.cell.settings, cell.verdict);
    }
  EXPECT_TRUE(audit_failed(report, "contradiction"));
}

TEST(Report, JsonRoundTrip) {
  const auto report = sample_report();
  const auto json = report_to_json(report);
  EXPECT_EQ(json.at("schema"), "repro-audit.report/1");
  const auto loaded = report_from_json(json, "r.json");
  ASSERT_EQ(loaded.cells.size(), report.cells.size());
  EXPECT_EQ(report_to_json(loaded), json);
}

}  // namespace
}  // namespace repro_audit
