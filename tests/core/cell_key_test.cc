// Key rule 2 and the migration of schema /1 files. The fixtures are files written by earlier versions
// (the shipped CPU baseline, the report golden of schema /1): they must keep loading and gating cleanly
// whatever this machine is, so nothing here runs an audit.
#include "plan/cell_key.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

#include "plan/cell_grammar.h"

#include "compare/baseline.h"
#include "compare/compare.h"
#include "compare/gate_policy.h"
#include "common/user_error.h"
#include "report/json_io.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

const std::string kFixtures = test_paths::kFixtureDir;
const std::string kBaselineV1 = kFixtures + "/baseline-v1-cpu-default.yaml";
const std::string kReportV1 = kFixtures + "/report-v1.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

FlagSet flags(const FlagSet& overrides, const std::string& device = "cpu") { return make_flag_set(overrides, device); }

TEST(CellKey, NamesOnlySettingsOffTheirDefaultInNameOrder) {
  EXPECT_EQ(cell_key("sum", "f32", "cpu", flags({})), "sum/f32@cpu");
  EXPECT_EQ(cell_key("sum", "f32", "cpu", flags({{"threads", "1"}})), "sum/f32@cpu|threads=1");
  EXPECT_EQ(cell_key("sum", "f32", "cpu", flags({{"threads", "1"}, {"seed", "7"}, {"deterministic_algorithms", "on"}})),
            "sum/f32@cpu|deterministic_algorithms=on,seed=7,threads=1");
  // Not applicable on the device: never in the key, whatever the override.
  EXPECT_EQ(cell_key("mm", "f32", "cpu", flags({{"cublas_workspace_config", ":4096:8"}})), "mm/f32@cpu");
  EXPECT_EQ(cell_key("mm", "f32", "cuda:0", flags({{"cublas_workspace_config", ":4096:8"}}, "cuda:0")),
            "mm/f32@cuda:0|cublas_workspace_config=:4096:8");
}

TEST(CellKey, ASettingAtItsDefaultLooksLikeOneThatDoesNotExistYet) {
  // What adding a setting does to the flag sets of existing cells: one more entry, at its default.
  auto before = flags({{"deterministic_algorithms", "on"}, {"threads", "1"}});
  const auto with_all = cell_key("sum", "f32", "cpu", before);
  before.erase("fill_uninitialized_memory");
  before.erase("seed");
  EXPECT_EQ(cell_key("sum", "f32", "cpu", before), with_all);
}

TEST(CellKey, Rule1KeysMigrate) {
  EXPECT_EQ(
      migrate_rule1_key("sum/f32@cpu|deterministic_algorithms=off,fill_uninitialized_memory=true,seed=0,threads=2"),
      "sum/f32@cpu");
  EXPECT_EQ(
      migrate_rule1_key("sum/f32@cpu|deterministic_algorithms=on,fill_uninitialized_memory=true,seed=0,threads=1"),
      "sum/f32@cpu|deterministic_algorithms=on,threads=1");
  EXPECT_EQ(
      migrate_rule1_key("mm/f32@cuda:1|allow_tf32=false,cublas_workspace_config=:16:8,deterministic_algorithms=off"),
      "mm/f32@cuda:1|cublas_workspace_config=:16:8");
  EXPECT_EQ(migrate_rule1_key("sum/f32@cpu|"), "sum/f32@cpu");
  // A setting this version does not know keeps its place: its default is unknown.
  EXPECT_EQ(migrate_rule1_key("sum/f32@cpu|retired_knob=0,threads=2"), "sum/f32@cpu|retired_knob=0");
  for (const char* bad : {"sum/f32@cpu", "sum/f32@cpu|threads", "sum/f32@cpu|threads=1,", "sum/f32@cpu|,threads=1",
                          "sum@cpu|threads=1", "sum/f32@cpu|threads=1,threads=2", "sum/f32@cpu|=1"})
    EXPECT_EQ(migrate_rule1_key(bad), std::nullopt) << bad;
}

TEST(CellKey, KeysParseBackIntoTheirParts) {
  const auto parsed = parse_cell_key("index_add/f32@cuda:1|cpu_capability=default,threads=1");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->probe, "index_add");
  EXPECT_EQ(parsed->variant, "f32");
  EXPECT_EQ(parsed->device, "cuda:1");
  EXPECT_EQ(parsed->settings, (FlagSet{{"cpu_capability", "default"}, {"threads", "1"}}));
  const auto plain = parse_cell_key("sum/f32@cpu");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->settings.empty());
  EXPECT_EQ(cell_key(plain->probe, plain->variant, plain->device, make_flag_set({}, "cpu")), "sum/f32@cpu");
  for (const char* bad : {"sum@cpu", "/f32@cpu", "sum/f32@", "sum/f32", "sum/f32@cpu|threads", "sum/f32@cpu|a=1,"})
    EXPECT_EQ(parse_cell_key(bad), std::nullopt) << bad;
}

TEST(KeyMigration, V1BaselineKeysFollowRule2) {
  const auto baseline = load_baseline_file(kBaselineV1);
  ASSERT_EQ(baseline.cells.size(), 330u);
  std::set<std::string> keys;
  for (const auto& cell : baseline.cells) {
    keys.insert(cell.key);
    for (const char* default_part :
         {"deterministic_algorithms=off", "fill_uninitialized_memory=true", "seed=0", "threads=2", "n/a"})
      EXPECT_EQ(cell.key.find(default_part), std::string::npos) << cell.key;
  }
  EXPECT_EQ(keys.size(), 330u);
  EXPECT_TRUE(keys.count("sum/f32@cpu"));
  EXPECT_TRUE(keys.count("sum/f32@cpu|threads=1"));
  EXPECT_TRUE(keys.count("sum/f32@cpu|deterministic_algorithms=warn,threads=1"));
  EXPECT_TRUE(keys.count("index_put_accumulate/f32@cpu|deterministic_algorithms=on"));
}

TEST(KeyMigration, V1BaselineGatesCleanlyAgainstItselfWrittenAsV2) {
  const auto v1 = load_comparable(kBaselineV1);
  const auto yaml = baseline_to_yaml(v1);
  ASSERT_EQ(yaml.rfind(std::string("schema: ") + kBaselineSchema + "\n", 0), 0u);
  const auto v2 = parse_baseline(yaml, "v2.yaml");
  const auto policy = default_gate_policy();
  for (const auto& [before, after] : {std::pair{&v1, &v2}, {&v2, &v1}}) {
    const auto comparison = compare_snapshots(*before, *after, {policy.slower_threshold});
    ASSERT_EQ(comparison.cells.size(), 330u);
    for (const auto& cell : comparison.cells)
      EXPECT_EQ(cell.changes, std::vector<Change>{Change::same}) << cell.key << ": " << cell.detail;
    EXPECT_FALSE(comparison.platform_changed);
    const auto result = gate_outcome(comparison, policy);
    EXPECT_TRUE(result.passed);
    EXPECT_EQ(gate_exit_code(result), 0);
  }
}

TEST(KeyMigration, V1ReportLoadsWithRule2KeysAndGatesCleanly) {
  const auto raw = nlohmann::json::parse(read_text(kReportV1));
  ASSERT_EQ(raw.at("schema"), kReportSchemaV1);
  const auto report = load_report_file(kReportV1);
  ASSERT_EQ(report.cells.size(), raw.at("cells").size());
  for (std::size_t i = 0; i < report.cells.size(); ++i) {
    // Both ways to migrate agree: from the cell's settings map, and from the old key's text.
    const auto& cell = report.cells[i].cell;
    EXPECT_EQ(cell.key, migrate_rule1_key(raw.at("cells")[i].at("key").get<std::string>()));
    EXPECT_EQ(cell.key, cell_key(cell.probe, cell.variant, cell.device, cell.settings));
  }
  EXPECT_TRUE(find_cell(report, "sum/f32@cpu|threads=1"));
  EXPECT_TRUE(find_cell(report, "sum/f32@cpu|deterministic_algorithms=on,threads=1"));

  // Gate the v1 report against a baseline made from it and written in v2, and the other way round.
  const auto snapshot = load_comparable(kReportV1);
  const auto baseline = parse_baseline(baseline_to_yaml(baseline_from_report(report)), "v2.yaml");
  const auto policy = default_gate_policy();
  for (const auto& [before, after] : {std::pair{&baseline, &snapshot}, {&snapshot, &baseline}}) {
    const auto comparison = compare_snapshots(*before, *after, {policy.slower_threshold});
    ASSERT_EQ(comparison.cells.size(), report.cells.size());
    for (const auto& cell : comparison.cells)
      EXPECT_EQ(cell.changes, std::vector<Change>{Change::same}) << cell.key << ": " << cell.detail;
    EXPECT_EQ(gate_exit_code(gate_outcome(comparison, policy)), 0);
  }
  // Written back, it is a v2 report that reads the same.
  const auto again = report_from_json(report_to_json(report), "v2.json");
  ASSERT_EQ(again.cells.size(), report.cells.size());
  for (std::size_t i = 0; i < again.cells.size(); ++i) EXPECT_EQ(again.cells[i].cell.key, report.cells[i].cell.key);
}

std::string error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

TEST(KeyMigration, TwoOldKeysThatBecomeOneAreAnError) {
  const std::string v1 = std::string("schema: ") + kBaselineSchemaV1 +
                         "\ncells:\n"
                         "  sum/f32@cpu|seed=0,threads=2: {verdict: deterministic}\n"
                         "  sum/f32@cpu|threads=2: {verdict: deterministic}\n";
  EXPECT_EQ(error_of([&] { parse_baseline(v1, "old.yaml"); }),
            "old.yaml: cell keys 'sum/f32@cpu|seed=0,threads=2' and 'sum/f32@cpu|threads=2' both become "
            "'sum/f32@cpu' under the current key rule");
  // Written in v2, the same text is two distinct keys, read as they are.
  auto v2 = v1;
  v2.replace(v2.find(kBaselineSchemaV1), std::string(kBaselineSchemaV1).size(), kBaselineSchema);
  EXPECT_EQ(parse_baseline(v2, "new.yaml").cells.at(0).key, "sum/f32@cpu|seed=0,threads=2");
  EXPECT_NE(error_of([&] {
              parse_baseline(std::string("schema: ") + kBaselineSchemaV1 + "\ncells:\n  sum@cpu: {verdict: error}\n",
                             "odd.yaml");
            }).find("odd.yaml: cell key 'sum@cpu' is not probe/variant@device|setting=value,..."),
            std::string::npos);

  auto report = report_to_json(load_report_file(kReportV1));
  report["schema"] = kReportSchemaV1;
  report["cells"][1] = report["cells"][0];
  report["cells"][1]["key"] = "sum/f32@cpu|threads=1,seed=0";
  EXPECT_NE(error_of([&] { report_from_json(report, "twice.json"); }).find("both become 'sum/f32@cpu|threads=1'"),
            std::string::npos);
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

Cell grammar_cell() {
  Cell cell;
  cell.probe = "index_add";
  cell.variant = "f32";
  cell.device = "cpu";
  cell.label = "strict threads=1";
  cell.settings = {{"deterministic_algorithms", "on"}, {"threads", "1"}, {"cudnn_benchmark", "n/a"}};
  cell.key = cell_key(cell.probe, cell.variant, cell.device, cell.settings);
  return cell;
}

TEST(CellGrammar, TheToolsOwnCellsFitIt) {
  EXPECT_EQ(cell_grammar_problem(grammar_cell(), true), "");
  auto model = grammar_cell();
  model.probe = "model._my-model";
  model.variant = "train.sgd3";
  model.device = "cuda:1";
  model.key = cell_key(model.probe, model.variant, model.device, model.settings);
  EXPECT_EQ(cell_grammar_problem(model, true), "");
}

TEST(CellGrammar, AnUnknownSettingOrAValueNotAsTheToolWritesItIsRefused) {
  auto unknown = grammar_cell();
  unknown.settings["evil"] = "x";
  unknown.key = cell_key(unknown.probe, unknown.variant, unknown.device, unknown.settings);
  EXPECT_EQ(cell_grammar_problem(unknown, true).rfind("setting \"evil\" is not one of: ", 0), 0u);
  auto padded = grammar_cell();
  padded.settings["threads"] = "01";
  EXPECT_EQ(cell_grammar_problem(padded, false),
            "setting threads has the value \"01\"; valid: an integer from 1 to 1024");
  EXPECT_EQ(cell_key_problem("sum/f32@cpu|threads=3"), "");
  EXPECT_NE(cell_key_problem("sum/f32@cpu|threads=03"), "");
  EXPECT_NE(cell_key_problem("sum/f32@cpu|threads=0"), "");
  EXPECT_NE(cell_key_problem("sum/f32@cpu|ranks=99"), "");
  EXPECT_NE(cell_key_problem(".."), "");
  EXPECT_NE(cell_key_problem("sum/f32@cpu|threads=1); import os; (1"), "");
}

TEST(CellGrammar, NamesThatCouldBeCodeOrPathsAreRefused) {
  const std::vector<std::pair<std::string, std::function<void(Cell&)>>> changes = {
      {"probe", [](Cell& c) { c.probe = "../x"; }},
      {"probe", [](Cell& c) { c.probe = ""; }},
      {"variant", [](Cell& c) { c.variant = "f32\"\"\""; }},
      {"device", [](Cell& c) { c.device = "cuda:"; }},
      {"device", [](Cell& c) { c.device = "cpu "; }},
      {"threads", [](Cell& c) { c.settings["threads"] = "1)"; }},
      {"seed", [](Cell& c) { c.settings["seed"] = "-1"; }},
      {"deterministic_algorithms", [](Cell& c) { c.settings["deterministic_algorithms"] = "maybe"; }},
      {"future", [](Cell& c) { c.settings["future"] = "a,b"; }},
      {"setting", [](Cell& c) { c.settings["Bad Name"] = "1"; }},
      {"label", [](Cell& c) { c.label = "strict\n# heading"; }},
  };
  for (const auto& [what, change] : changes) {
    auto cell = grammar_cell();
    change(cell);
    EXPECT_NE(cell_grammar_problem(cell, false).find(what), std::string::npos)
        << what << ": " << cell_grammar_problem(cell, false);
  }
}

TEST(CellGrammar, AKeyMustNameItsFieldsInTheGrammar) {
  auto cell = grammar_cell();
  cell.key = "";
  EXPECT_NE(cell_grammar_problem(cell, true).find("is not the key"), std::string::npos);
  EXPECT_EQ(cell_grammar_problem(cell, false), "");  // schema /1 keys are made again from the fields
  cell.key = "index_add/f64@cpu";
  EXPECT_NE(cell_grammar_problem(cell, true).find("is not the key"), std::string::npos);
  cell.key = "index_add/f32@cpu|threads=1)";
  EXPECT_NE(cell_grammar_problem(cell, true).find("in its key, setting threads"), std::string::npos);
  cell.key = "index_add/f32@cpu|seed=0";  // a default named: written by hand, still a key
  EXPECT_EQ(cell_grammar_problem(cell, true), "");
}

}  // namespace
}  // namespace repro_audit
