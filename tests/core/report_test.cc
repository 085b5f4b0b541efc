#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <tuple>

#include "common/json_number.h"
#include "common/user_error.h"
#include "hash/digest.h"
#include "hostile_inputs.h"
#include "report/json_io.h"
#include "report/text_format.h"
#include "test_catalogue.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

// Runs whose outputs are named by `names`; equal names give equal digests.
ProcessObservation runs(const std::vector<std::string>& names, std::int64_t time) {
  ProcessObservation observation;
  for (const auto& name : names) {
    const auto digest = digest_text(name);
    observation.runs.push_back({digest, {{"output", digest}}, false, time, ""});
  }
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

TEST(Report, AModelThatFailsIsTheModelsErrorNotAContradictionOfTheDocumentation) {
  Config config;
  config.models = {ModelSpec{.name = "net", .path = "/models/net.pt", .inputs = {}}};
  config.profiles = {"default"};
  config.axes = {{"threads", {"1"}}};
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  ASSERT_EQ(plan.cells.size(), 1u);
  ProcessObservation raised;
  raised.status = ObservationStatus::exception;
  raised.message = "forward: expected Float but found Long";
  const auto report = build_report(plan, {{plan.cells[0].key, {raised}}}, testing::test_catalogue());
  ASSERT_TRUE(report.cells[0].contradiction);
  EXPECT_EQ(report.cells[0].contradiction->text.rfind("the model failed: error", 0), 0u)
      << report.cells[0].contradiction->text;
  const auto groups = finding_groups(report);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].heading, "Cells that ended without a verdict");
  EXPECT_TRUE(audit_failed(report, FailOn::contradiction));  // it still fails the audit
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
  const auto* strict = find_cell(report, "index_put_accumulate/f32@cpu|deterministic_algorithms=on,threads=1");
  ASSERT_TRUE(strict);
  ASSERT_TRUE(strict->cost);
  EXPECT_DOUBLE_EQ(strict->cost->value, 3.0);
}

TEST(Report, ExpectedDivergenceUnderDefaultDoesNotFailTheAudit) {
  auto report = sample_report();
  EXPECT_FALSE(audit_failed(report, FailOn::contradiction));
  EXPECT_TRUE(audit_failed(report, FailOn::any));
  for (auto& cell : report.cells)
    if (cell.cell.probe == "index_put_accumulate" && cell.cell.settings.at("deterministic_algorithms") == "on") {
      cell.verdict.kind = VerdictKind::nondeterministic;
      cell.verdict.digests_agree = false;
      cell.contradiction = find_contradiction(Documented::alternative_under_strict, cell.cell.settings, cell.verdict);
    }
  EXPECT_TRUE(audit_failed(report, FailOn::contradiction));
  EXPECT_TRUE(audit_failed(report, FailOn::any));
}

TEST(Report, JsonRoundTrip) {
  const auto report = sample_report();
  const auto json = report_to_json(report);
  EXPECT_EQ(json.at("schema"), "repro-audit.report/2");
  const auto loaded = report_from_json(json, "r.json");
  ASSERT_EQ(loaded.cells.size(), report.cells.size());
  EXPECT_EQ(report_to_json(loaded), json);
  // Parsed from text, the cells stream in one by one: the same report.
  EXPECT_EQ(report_to_json(parse_report(json.dump(2), "r.json")), json);
}

std::string load_error(const std::string& text) {
  try {
    parse_report(text, "r.json");
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Report, EveryDigestIsThirtyTwoLowerCaseHexDigits) {
  const auto json = report_to_json(sample_report());
  const auto key = json["cells"][0]["key"].get<std::string>();
  const std::pair<std::string, std::string> places[] = {
      {"/cells/0/digest", "digest"},
      {"/cells/0/kernel_digest", "kernel_digest"},
      {"/cells/0/observations/0/runs/1/digest", "run digest"},
      {"/cells/0/observations/0/runs/1/kernel_digest", "run kernel_digest"},
      {"/cells/0/observations/0/runs/1/outputs/0/digest", "output digest"},
  };
  for (const auto& [pointer, what] : places)
    for (const auto& bad :
         {std::string("0123456789ABCDEF0123456789ABCDEF"), std::string(31, 'a'), std::string(32, 'g')}) {
      auto edited = json;
      edited[nlohmann::json::json_pointer(pointer)] = bad;
      EXPECT_EQ(load_error(edited.dump()), "r.json: malformed report: cells[0] (" + key + "): " + what + " '" + bad +
                                               "' is not 32 lower-case hex digits");
    }
  EXPECT_EQ(load_error(json.dump()), "no error");
}

// A float cast to int out of range is undefined behaviour, and an integer past the type's range wraps:
// every integer the loader reads takes an integer in range, or a whole float in range.
TEST(Report, EveryIntegerIsInRangeOrALoadError) {
  const auto json = report_to_json(sample_report());
  std::size_t cell = 0;
  while (!json["cells"][cell].contains("divergence")) ++cell;
  const auto at = [&](const std::string& rest) { return "/cells/" + std::to_string(cell) + rest; };
  const std::string places[] = {at("/runs"),
                                at("/processes"),
                                at("/distinct_digests"),
                                at("/timing/samples"),
                                at("/timing/median_ns"),
                                at("/divergence/run"),
                                at("/divergence/differing_elements"),
                                at("/observations/0/process"),
                                at("/observations/0/runs/1/time_ns")};
  const nlohmann::json out_of_range[] = {1e300, -1e300, 2.5, 18446744073709551615u, 9.3e18};
  for (const auto& pointer : places) {
    for (const auto& bad : out_of_range) {
      auto edited = json;
      edited[nlohmann::json::json_pointer(pointer)] = bad;
      const auto message = load_error(edited.dump());
      EXPECT_EQ(message.rfind("r.json: malformed report: cells[" + std::to_string(cell) + "]: ", 0), 0u)
          << pointer << " = " << bad << ": " << message;
      EXPECT_NE(message.find("integer " + bad.dump() + " is out of range here"), std::string::npos) << message;
    }
    auto edited = json;
    edited[nlohmann::json::json_pointer(pointer)] = "7";
    EXPECT_NE(load_error(edited.dump()).find("type must be an integer, but is string"), std::string::npos) << pointer;
    edited[nlohmann::json::json_pointer(pointer)] = 7;
    const auto as_integer = report_to_json(parse_report(edited.dump(), "r.json"));
    edited[nlohmann::json::json_pointer(pointer)] = 7.0;  // a whole float reads as the integer
    EXPECT_EQ(report_to_json(parse_report(edited.dump(), "r.json")), as_integer) << pointer;
    EXPECT_FALSE(as_integer == report_to_json(parse_report(json.dump(), "r.json"))) << pointer;
  }
}

// A time or count below zero was never measured: shown or written back, it would pass for a result.
TEST(Report, ANegativeTimeOrCountIsALoadErrorNamingTheFileAndField) {
  const auto json = report_to_json(sample_report());
  std::size_t cell = 0;
  while (!json["cells"][cell].contains("divergence")) ++cell;
  const auto at = [&](const std::string& rest) { return "/cells/" + std::to_string(cell) + rest; };
  const std::string places[] = {at("/runs"),
                                at("/processes"),
                                at("/distinct_digests"),
                                at("/divergence_rate_bound"),
                                at("/timing/samples"),
                                at("/timing/median_ns"),
                                at("/timing/p10_ns"),
                                at("/timing/p90_ns"),
                                at("/divergence/max_abs_difference"),
                                at("/observations/0/runs/1/time_ns"),
                                "/duration_seconds"};
  for (const auto& pointer : places) {
    auto edited = json;
    edited[nlohmann::json::json_pointer(pointer)] = -1;
    const auto message = load_error(edited.dump());
    const auto field = pointer.substr(pointer.rfind('/') + 1);
    EXPECT_EQ(message.rfind("r.json: malformed report: ", 0), 0u) << pointer << ": " << message;
    EXPECT_NE(message.find("\"" + field + "\": must be a time or count of 0 or more, not -1"), std::string::npos)
        << pointer << ": " << message;
  }
  auto edited = json;
  edited["cells"][cell]["observations"][0]["timing_ns"] = {1000, -5};
  EXPECT_NE(load_error(edited.dump()).find("\"timing_ns\": must be times of 0 or more, not -5"), std::string::npos);
}

// An infinite difference is written as null (JSON has no infinity) and loads as infinite, in a report as
// in a worker's record: a report holding one loaded as malformed before.
TEST(Report, AnInfiniteDifferenceIsWrittenAsNullAndLoadsAsInfinite) {
  auto report = sample_report();
  auto cell = std::find_if(report.cells.begin(), report.cells.end(),
                           [](const CellReport& each) { return each.verdict.divergence.has_value(); });
  ASSERT_NE(cell, report.cells.end());
  cell->verdict.divergence->differing_elements = 3;
  cell->verdict.divergence->elements = 8;
  cell->verdict.divergence->max_abs_difference = std::numeric_limits<double>::infinity();
  cell->verdict.divergence->max_ulp_difference = std::numeric_limits<double>::infinity();
  const auto written = report_to_json(report).dump();
  EXPECT_NE(written.find("\"max_abs_difference\":null"), std::string::npos);
  const auto loaded = parse_report(written, "r.json");
  const auto& divergence = loaded.cells.at(static_cast<std::size_t>(cell - report.cells.begin())).verdict.divergence;
  ASSERT_TRUE(divergence);
  EXPECT_TRUE(std::isinf(divergence->max_abs_difference));
  EXPECT_TRUE(std::isinf(divergence->max_ulp_difference));
  EXPECT_EQ(report_to_json(loaded).dump(), written);
}

// A report that does not say its audit finished is not taken for a whole one (a gate or a baseline
// refuses it); one of schema /1, from before the field, reads as it always did.
TEST(Report, AReportWithoutItsCompleteFieldIsNotOfAWholeAuditUnlessItPredatesTheField) {
  auto json = report_to_json(sample_report());
  EXPECT_EQ(incomplete_reason(parse_report(json.dump(), "r.json")), "");
  json.erase("complete");
  const auto loaded = parse_report(json.dump(), "r.json");
  EXPECT_FALSE(loaded.complete);
  EXPECT_EQ(incomplete_reason(loaded), "the report does not say its audit finished (no \"complete\" field)");
  EXPECT_FALSE(report_to_json(loaded).at("complete").get<bool>());  // written back as it was read
  json["complete"] = false;
  EXPECT_EQ(incomplete_reason(parse_report(json.dump(), "r.json")), "the audit was interrupted");
  auto v1 = nlohmann::json::parse(std::ifstream(std::string(test_paths::kFixtureDir) + "/report-v1.json"));
  v1.erase("complete");
  EXPECT_TRUE(parse_report(v1.dump(), "report-v1.json").complete);
}

TEST(JsonInteger, TakesEachTypesWholeRangeAndNothingPastIt) {
  using nlohmann::json;
  EXPECT_EQ(json_integer<int>(json(2147483647)), 2147483647);
  EXPECT_EQ(json_integer<int>(json(-2147483648LL)), -2147483647 - 1);
  EXPECT_THROW(json_integer<int>(json(2147483648LL)), json::out_of_range);
  EXPECT_THROW(json_integer<int>(json(2147483648.0)), json::out_of_range);
  EXPECT_EQ(json_integer<int>(json(-2147483648.0)), -2147483647 - 1);
  EXPECT_EQ(json_integer<std::uint64_t>(json(18446744073709551615u)), 18446744073709551615u);
  EXPECT_THROW(json_integer<std::uint64_t>(json(-1)), json::out_of_range);
  EXPECT_THROW(json_integer<std::uint64_t>(json(1.8446744073709552e19)), json::out_of_range);
  EXPECT_THROW(json_integer<std::int64_t>(json(9.223372036854775808e18)), json::out_of_range);
  EXPECT_EQ(json_integer<std::int64_t>(json(-9.223372036854775808e18)), std::numeric_limits<std::int64_t>::min());
  EXPECT_THROW(json_integer<int>(json(true)), json::type_error);
  EXPECT_THROW(json_integer<int>(json(nullptr)), json::type_error);
  EXPECT_EQ(json_integer_or(json::object(), "absent", 5), 5);
  EXPECT_THROW(json_integer_or(json{{"n", 0.5}}, "n", 5), json::out_of_range);
}

TEST(Report, ObservationStatusesRoundTripAndAnUnknownOneIsALoadError) {
  for (const auto& [status, name] : kObservationStatusNames) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(observation_status_from_string(name), status);
    ProcessObservation observation;
    observation.status = status;
    const nlohmann::json json = observation;
    EXPECT_EQ(json.at("status"), name);
    EXPECT_EQ(json.get<ProcessObservation>().status, status);
  }
  EXPECT_EQ(observation_status_from_string("error"), std::nullopt);  // a verdict, not a status
  EXPECT_EQ(observation_status_names(), "ok, exception, unsupported, crashed, timeout");

  auto json = report_to_json(sample_report());
  json[nlohmann::json::json_pointer("/cells/0/observations/0/status")] = "fine";
  const auto message = load_error(json.dump());
  EXPECT_EQ(message.rfind("r.json: malformed report: cells[0]", 0), 0u) << message;
  EXPECT_NE(message.find("unknown status 'fine'; valid statuses: ok, exception, unsupported, crashed, timeout"),
            std::string::npos)
      << message;
}

TEST(Report, DeepNestingIsAnErrorNotACrash) {
  const std::string head = std::string(R"({"schema": ")") + kReportSchema + R"(", "cells": )";
  EXPECT_EQ(load_error(head + testing::nested_lists(1000000) + "}"),
            "r.json: byte 108: JSON nested deeper than 64 levels");
  EXPECT_EQ(load_error(head + "[], \"environment\": " + testing::nested_lists(100) + "}"),
            "r.json: byte 127: JSON nested deeper than 64 levels");
}

TEST(Report, NotAReportComesBeforeWhatIsWrongInIt) {
  const auto not_a_report =
      std::string("r.json: not a repro-audit report (expected \"schema\": \"") + kReportSchema + "\")";
  EXPECT_EQ(load_error(R"({"schema": 1, "cells": [{"key": 2}]})"), not_a_report);
  EXPECT_EQ(load_error("[1, 2]"), not_a_report);
  EXPECT_NE(load_error(std::string(R"({"schema": ")") + kReportSchema + R"(", "cells": [{"key": 2}]})")
                .rfind("r.json: malformed report: cells[0]: [json.exception.type_error.302]", 0),
            std::string::npos);
  EXPECT_EQ(load_error(std::string(R"({"schema": ")") + kReportSchema + R"(", "cells": {}})"),
            "r.json: malformed report: \"cells\" must be an array");
}

TEST(Report, AFolderIsAnErrorNotAnEmptyReport) {
  const auto folder = std::filesystem::temp_directory_path().string();
  try {
    load_report_file(folder);
    FAIL() << "a folder was read as a report";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), folder + ": cannot read the report: Is a directory");
  }
}

// The rule find_setting_notes implements, written the obvious (quadratic) way as its oracle.
std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> notes_by_pairs(
    const std::vector<CellReport>& cells) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> changing;
  for (const auto& a : cells)
    for (const auto& b : cells) {
      if (a.verdict.kind != VerdictKind::deterministic || b.verdict.kind != VerdictKind::deterministic ||
          a.cell.probe != b.cell.probe || a.cell.variant != b.cell.variant || a.cell.device != b.cell.device ||
          a.verdict.digest == b.verdict.digest || a.cell.settings.size() != b.cell.settings.size())
        continue;
      std::vector<std::string> differing;
      bool same_names = true;
      for (const auto& [name, value] : a.cell.settings) {
        const auto other = b.cell.settings.find(name);
        if (other == b.cell.settings.end())
          same_names = false;
        else if (other->second != value)
          differing.push_back(name);
      }
      if (same_names && differing.size() == 1)
        changing[{a.cell.probe, a.cell.variant, a.cell.device, differing[0]}].insert(a.cell.settings.at(differing[0]));
    }
  return changing;
}

TEST(Report, SettingNotesAgreeWithComparingEveryPair) {
  std::mt19937 random(7);
  auto pick = [&](int n) { return std::to_string(std::uniform_int_distribution<int>(0, n - 1)(random)); };
  for (int round = 0; round < 200; ++round) {
    std::vector<CellReport> cells;
    const int count = 1 + std::uniform_int_distribution<int>(0, 30)(random);
    for (int i = 0; i < count; ++i) {
      CellReport cell;
      cell.cell.probe = "p" + pick(2);
      cell.cell.variant = "v" + pick(2);
      cell.cell.device = "cpu";
      cell.cell.settings = {{"threads", pick(3)}, {"seed", pick(2)}};
      if (pick(4) == "0") cell.cell.settings["extra"] = pick(2);
      cell.verdict.kind = pick(5) == "0" ? VerdictKind::nondeterministic : VerdictKind::deterministic;
      cell.verdict.digest = digest_text(pick(3));
      cells.push_back(cell);
    }
    std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> found;
    for (const auto& note : find_setting_notes(cells))
      found[{note.probe, note.variant, note.device, note.setting}].insert(note.values.begin(), note.values.end());
    ASSERT_EQ(found, notes_by_pairs(cells)) << "round " << round;
  }
}

// Comparing every pair of these cells of one variant took minutes; each note must still be found.
TEST(Report, SettingNotesOfALargeReport) {
  std::vector<CellReport> cells;
  const int count = 40000;
  for (int i = 0; i < count; ++i) {
    CellReport cell;
    cell.cell.probe = "sum";
    cell.cell.variant = "f32";
    cell.cell.device = "cpu";
    cell.cell.settings = {{"seed", std::to_string(i)}, {"threads", "1"}};
    cell.verdict.kind = VerdictKind::deterministic;
    cell.verdict.digest = digest_text(i == 7 ? "other" : "same");  // seed 7 differs from every other seed
    cells.push_back(cell);
  }
  const auto notes = find_setting_notes(cells);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].setting, "seed");
  EXPECT_EQ(notes[0].values.size(), static_cast<std::size_t>(count));
}

}  // namespace
}  // namespace repro_audit
