// Verdicts that could have failed: the runs --detect chooses, the sensitivity check's record and the
// vacuous verdict it makes, through the verdict, the report's JSON and every printer's summary.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/config_json.h"
#include "kind/cell_kind.h"
#include "protocol/observation_json.h"
#include "report/json_io.h"
#include "report/text_format.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

TEST(Detect, TheRunsAreTheFewestWhoseBoundReachesTheRate) {
  EXPECT_EQ(runs_to_detect(0.01), 300);
  EXPECT_EQ(runs_to_detect(0.1), 30);
  EXPECT_EQ(runs_to_detect(0.05), 60);
  EXPECT_EQ(runs_to_detect(0.5), 6);
  for (double rate = kMinDetectRate; rate <= kMaxDetectRate; rate *= 1.37) {
    const int runs = runs_to_detect(rate);
    EXPECT_LE(divergence_rate_bound(runs), rate) << rate;
    EXPECT_GT(divergence_rate_bound(runs - 1), rate) << rate;
    // A divergence of exactly that rate is missed by all n runs with at most 5%.
    EXPECT_LE(std::pow(1 - rate, runs), 0.05) << rate;
  }
}

TEST(Detect, RepeatsSpreadTheRunsOverTheProcessesAfterWarmUp) {
  EXPECT_EQ(repeats_to_detect(0.01, 2, 1), 149);  // 2 x (1 + 149) = 300
  EXPECT_EQ(repeats_to_detect(0.1, 1, 1), 29);
  EXPECT_EQ(repeats_to_detect(0.1, 3, 0), 10);
  EXPECT_EQ(repeats_to_detect(0.5, 10, 1), 1);  // never fewer than one repeat
}

TEST(Detect, TheConfigKeepsItsRateAndOlderConfigsHaveNone) {
  Config config;
  config.detect = 0.02;
  const auto back = config_from_json(config_to_json(config), "test");
  ASSERT_TRUE(back.detect);
  EXPECT_DOUBLE_EQ(*back.detect, 0.02);
  auto older = config_to_json(Config{});
  EXPECT_FALSE(older.contains("detect"));
  EXPECT_FALSE(config_from_json(older, "test").detect);
  config.detect = 0.9;
  EXPECT_THROW(validate_config(config, {}, "test"), std::exception);
}

Sensitivity sensitivity(std::int64_t changed, std::int64_t elements = 1000) {
  Sensitivity s;
  s.output = "output";
  s.elements = elements;
  s.changed = changed;
  s.orders = 3;
  s.floor = 0.1;
  return s;
}

TEST(Sensitivity, BelowTheFloorOrNoneChangedIsInsensitive) {
  EXPECT_FALSE(sensitivity(500).insensitive());
  EXPECT_FALSE(sensitivity(100).insensitive());
  EXPECT_TRUE(sensitivity(99).insensitive());
  EXPECT_TRUE(sensitivity(0).insensitive());
  auto zero_floor = sensitivity(0);
  zero_floor.floor = 0;
  EXPECT_TRUE(zero_floor.insensitive()) << "nothing changed: insensitive whatever the floor";
  EXPECT_EQ(sensitivity_text(sensitivity(482)),
            "48.2% of 'output' (482 of 1000 elements) change bits under 3 other accumulation orders (floor 10%)");
}

TEST(Sensitivity, ReadFromAFileItsNumbersAreKeptInRange) {
  const nlohmann::json hostile = {{"output", "o"}, {"elements", -5}, {"changed", 12}, {"orders", -1}, {"floor", 7.5}};
  const auto read = hostile.get<Sensitivity>();
  EXPECT_EQ(read.elements, 0);
  EXPECT_EQ(read.changed, 0);
  EXPECT_EQ(read.orders, 0);
  EXPECT_DOUBLE_EQ(read.floor, 0.1);
  auto huge = hostile;
  huge["changed"] = 1e30;  // not an integer the record can hold: the file is refused, not misread
  EXPECT_THROW(huge.get<Sensitivity>(), nlohmann::json::exception);
  const auto back = nlohmann::json(sensitivity(321)).get<Sensitivity>();
  EXPECT_EQ(back.changed, 321);
  EXPECT_EQ(back.elements, 1000);
}

Cell probe_cell() {
  Cell cell;
  cell.key = "sum/f32@cpu|deterministic_algorithms=off,seed=0,threads=1";
  cell.device = "cpu";
  cell.label = "default";
  cell.probe = "sum";
  cell.variant = "f32";
  cell.settings = {{"deterministic_algorithms", "off"}, {"threads", "1"}, {"seed", "0"}};
  return cell;
}

std::vector<ProcessObservation> agreeing(std::optional<Sensitivity> measured) {
  std::vector<ProcessObservation> observations(2);
  for (int p = 0; p < 2; ++p) {
    observations[p].process = p;
    const std::string digest(32, 'd');
    for (int r = 0; r < 3; ++r) observations[p].runs.push_back({digest, {{"output", digest}}, r == 0, 10, ""});
  }
  observations[0].sensitivity = measured;  // the first process measures it
  return observations;
}

TEST(Sensitivity, ADeterministicVerdictOfInsensitiveInputsIsVacuousAndSaysSo) {
  const auto cell = probe_cell();
  const auto vacuous = judge(cell, agreeing(sensitivity(3)));
  EXPECT_EQ(vacuous.kind, VerdictKind::deterministic);
  ASSERT_TRUE(vacuous.sensitivity);
  EXPECT_TRUE(is_vacuous(vacuous));
  EXPECT_NE(vacuous.message.find("vacuous"), std::string::npos) << vacuous.message;
  const auto lines = kind_of(cell).detail_lines(vacuous);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("order sensitivity INSUFFICIENT: 0.3%", 0), 0u) << lines[0];

  const auto sound = judge(cell, agreeing(sensitivity(900)));
  EXPECT_FALSE(is_vacuous(sound));
  EXPECT_EQ(sound.message.find("vacuous"), std::string::npos);
  EXPECT_EQ(kind_of(cell).detail_lines(sound).at(0).rfind("order sensitivity: 90.0%", 0), 0u);

  const auto unmeasured = judge(cell, agreeing(std::nullopt));
  EXPECT_FALSE(unmeasured.sensitivity);
  EXPECT_FALSE(is_vacuous(unmeasured));
  EXPECT_TRUE(kind_of(cell).detail_lines(unmeasured).empty());
}

TEST(Sensitivity, ADivergenceIsNeverVacuous) {
  auto observations = agreeing(sensitivity(0));
  observations[1].runs[2].digest = std::string(32, 'e');
  const auto verdict = judge(probe_cell(), observations);
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_FALSE(is_vacuous(verdict));
}

Report report_with_config(const std::vector<CellReport>& cells, nlohmann::json config = nlohmann::json::object()) {
  Report report;
  report.device = "cpu";
  report.columns = {"default"};
  report.config = std::move(config);
  report.cells = cells;
  return report;
}

TEST(Sensitivity, TheReportKeepsItAndOlderReportsHaveNone) {
  CellReport cell;
  cell.cell = probe_cell();
  cell.verdict = judge(cell.cell, agreeing(sensitivity(2)));
  cell.observations = agreeing(sensitivity(2));
  const auto json = report_to_json(report_with_config({cell}));
  const auto& written = json.at("cells").at(0);
  EXPECT_EQ(written.at("sensitivity").at("changed"), 2);
  EXPECT_EQ(written.at("vacuous"), true);
  EXPECT_EQ(written.at("observations").at(0).at("sensitivity").at("elements"), 1000);
  const auto back = report_from_json(json, "test");
  ASSERT_TRUE(back.cells.at(0).verdict.sensitivity);
  EXPECT_TRUE(is_vacuous(back.cells.at(0).verdict));

  auto older = json;
  older["cells"][0].erase("sensitivity");
  older["cells"][0].erase("vacuous");
  older["cells"][0]["observations"][0].erase("sensitivity");
  const auto old_report = report_from_json(older, "test");
  EXPECT_FALSE(old_report.cells.at(0).verdict.sensitivity);
  EXPECT_TRUE(power_lines(old_report).empty());
}

TEST(Power, TheSummarySaysWhatTheRunsCouldCatchAndWhichVerdictsAreVacuous) {
  CellReport vacuous;
  vacuous.cell = probe_cell();
  vacuous.verdict = judge(vacuous.cell, agreeing(sensitivity(0)));  // 6 runs
  const auto lines = power_lines(report_with_config({vacuous}, {{"detect", 0.5}}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "Runs chosen by --detect 0.5: 6 runs per cell catch, with 95% confidence, a divergence that shows in a "
            "fraction 0.5 of runs");
  EXPECT_EQ(lines[1].rfind("1 deterministic verdict(s) vacuous", 0), 0u) << lines[1];

  const auto short_of = power_lines(report_with_config({vacuous}, {{"detect", 0.1}}));  // 30 needed, 6 ran
  EXPECT_NE(short_of[0].find("1 cell(s) whose runs agreed ran fewer"), std::string::npos) << short_of[0];
  // A rate out of range (a hand-edited report) is not repeated as a claim.
  EXPECT_EQ(power_lines(report_with_config({vacuous}, {{"detect", 7}})).size(), 1u);
}

}  // namespace
}  // namespace repro_audit
