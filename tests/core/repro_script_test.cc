#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/user_error.h"
#include "repro/export.h"
#include "repro/parity.h"
#include "repro/python_script.h"

namespace repro_audit {
namespace {

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(PythonSettings, EverySettingHasAPythonSpelling) {
  for (const auto& name : setting_names()) EXPECT_TRUE(has_python_spelling(name)) << name;
}

TEST(PythonSettings, SpellEnvironmentVariablesAndTorchCalls) {
  const auto strict = python_settings({{"deterministic_algorithms", "on"},
                                       {"threads", "1"},
                                       {"cpu_capability", "default"},
                                       {"seed", "7"},
                                       {"mkl_cbwr", "unset"},
                                       {"cudnn_benchmark", "n/a"}},
                                      false);
  EXPECT_TRUE(has_line(strict.environment, "os.environ[\"ATEN_CPU_CAPABILITY\"] = \"default\""));
  EXPECT_TRUE(has_line(strict.environment, "os.environ.pop(\"MKL_CBWR\", None)"));
  EXPECT_TRUE(has_line(strict.calls, "torch.use_deterministic_algorithms(True, warn_only=False)"));
  EXPECT_TRUE(has_line(strict.calls, "torch.set_num_threads(1)"));
  EXPECT_EQ(strict.seed, "7");
  EXPECT_EQ(strict.calls.size(), 2u);  // n/a settings are not spelled
  const auto warn = python_settings({{"deterministic_algorithms", "warn"}, {"cudnn_benchmark", "true"}}, true);
  EXPECT_TRUE(has_line(warn.calls, "torch.use_deterministic_algorithms(True, warn_only=True)"));
  EXPECT_TRUE(has_line(warn.calls, "torch.backends.cudnn.benchmark = True"));
  // On CUDA the script runs ATen's kernels, as libtorch did, not torch._native's Python ones.
  EXPECT_TRUE(has_line(warn.environment, "os.environ[\"TORCH_DISABLE_NATIVE_JIT\"] = \"1\""));
}

CellReport deterministic_cell() {
  CellReport cell;
  cell.cell.key = "p/f32@cpu";
  cell.cell.probe = "p";
  cell.verdict.kind = VerdictKind::deterministic;
  ProcessObservation observation;
  observation.runs.push_back({"run", {{"output", "aaa"}, {"grad", "bbb"}}});
  cell.observations.push_back(observation);
  return cell;
}

TEST(Parity, EqualDigestsAreEqual) {
  ProbeInfo probe{.name = "p"};
  const auto outcome = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"bbb"}})");
  EXPECT_EQ(outcome.status, "equal") << outcome.detail;
}

TEST(Parity, AMismatchNamesTheFirstDifferingOutput) {
  ProbeInfo probe{.name = "p"};
  const auto outcome = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"ccc"}})");
  EXPECT_EQ(outcome.status, "mismatch");
  EXPECT_EQ(outcome.probe, "p");
  EXPECT_EQ(outcome.detail, "output 'grad': Python ccc vs C++ bbb");
  const auto verdict =
      compare_with_script(deterministic_cell(), probe, R"({"verdict":"raises","detail":"no deterministic kernel"})");
  EXPECT_EQ(verdict.status, "mismatch");
  EXPECT_EQ(verdict.detail,
            "verdict: Python raises (no deterministic kernel), C++ deterministic; first difference: output 'output' is "
            "missing from the Python run");
}

TEST(Parity, ADeclaredDifferenceIsComparedByVerdictAndMustStillBeTrue) {
  ProbeInfo probe{.name = "p"};
  probe.python.differs_reason = "its kernel is C++ only";
  const auto other_bits = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"xxx","grad":"yyy"}})");
  EXPECT_EQ(other_bits.status, "verdict");
  const auto same_bits = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"bbb"}})");
  EXPECT_EQ(same_bits.status, "mismatch");
  EXPECT_NE(same_bits.detail.find("the declaration is stale"), std::string::npos);
}

TEST(ReproFolders, AreNamedAfterTheKey) {
  EXPECT_EQ(folder_name_of("index_add/f32@cpu|deterministic_algorithms=on,threads=2"),
            "index_add_f32_cpu_deterministic_algorithms=on_threads=2");
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

// Answers every cell of an export request as export-inputs does; counts the requests.
class AnsweringExporter : public Worker {
 public:
  explicit AnsweringExporter(const std::string& request) {
    const auto message = nlohmann::json::parse(request);
    for (const auto& cell : message.at("request").at("cells")) {
      nlohmann::json answer = nlohmann::json::object();
      answer["key"] = cell.at("key");
      answer["inputs"] = nlohmann::json::array();
      answer["inputs"].push_back({{"name", "x"}, {"dtype", "Float"}, {"sizes", std::vector<int>{2}}});
      answer["input_digest"] = std::string(32, 'a');
      lines_.push_back(answer.dump());
    }
  }
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point) override {
    if (next_ == lines_.size()) return ReadStatus::end_of_output;
    line = lines_[next_++];
    return ReadStatus::line;
  }
  void terminate(std::chrono::milliseconds) override {}
  std::string wait() override { return "exit 0"; }
  int signal() const override { return 0; }
  std::string log_tail(std::size_t) const override { return ""; }

 private:
  std::vector<std::string> lines_;
  std::size_t next_ = 0;
};

class AnsweringLauncher : public WorkerLauncher {
 public:
  std::unique_ptr<Worker> start(const std::string& request, const std::map<std::string, std::string>&) override {
    return std::make_unique<AnsweringExporter>(request);
  }
};

ProbeInfo python_probe(const std::string& name, const std::string& variant) {
  ProbeInfo probe;
  probe.name = name;
  probe.variants.push_back({variant, "", {"cpu"}, ""});
  probe.python.code = "return {\"output\": x * 2}";
  return probe;
}

CellReport cell_of(const std::string& probe, const std::string& variant) {
  auto cell = deterministic_cell();
  cell.cell.probe = probe;
  cell.cell.variant = variant;
  cell.cell.device = "cpu";
  cell.cell.key = probe + "/" + variant + "@cpu";
  return cell;
}

class ReproExport : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::temp_directory_path() / ("repro-audit-export-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::vector<std::string> entries(const std::filesystem::path& folder) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::filesystem::path folder_;
};

TEST_F(ReproExport, KeysThatSanitiseAlikeGetFoldersOfTheirOwnAndSaySo) {
  const Catalogue catalogue = {python_probe("p_v", "x"), python_probe("p", "v_x")};
  Report report;
  report.cells = {cell_of("p_v", "x"), cell_of("p", "v_x")};
  AnsweringLauncher launcher;
  const auto exported =
      export_repros(report, {&report.cells[0], &report.cells[1]}, catalogue, (folder_ / "out").string(), launcher);
  ASSERT_EQ(exported.size(), 2u);
  EXPECT_EQ(exported[0].skipped, "");
  EXPECT_EQ(std::filesystem::path(exported[0].folder).filename(), "p_v_x_cpu");
  EXPECT_NE(exported[1].folder, exported[0].folder);
  EXPECT_EQ(std::filesystem::path(exported[1].folder).filename().string().rfind("p_v_x_cpu-", 0), 0u);
  EXPECT_NE(exported[1].warning.find("also another cell's"), std::string::npos) << exported[1].warning;
  EXPECT_EQ(entries(folder_ / "out").size(), 2u);  // the staging folder is gone
  for (const auto& cell : exported) EXPECT_TRUE(std::filesystem::exists(cell.folder + "/repro.py"));
}

TEST_F(ReproExport, AStoppedExportLeavesNothingAndSaysWhy) {
  const Catalogue catalogue = {python_probe("p", "x")};
  Report report;
  report.cells = {cell_of("p", "x")};
  AnsweringLauncher launcher;
  const auto exported =
      export_repros(report, {&report.cells[0]}, catalogue, (folder_ / "out").string(), launcher, [] { return true; });
  EXPECT_TRUE(exported[0].folder.empty());
  EXPECT_NE(exported[0].skipped.find("interrupted"), std::string::npos);
  EXPECT_TRUE(entries(folder_ / "out").empty());
}

TEST_F(ReproExport, AnEarlierExportOfTheSameCellIsReplacedWhole) {
  const Catalogue catalogue = {python_probe("p", "x")};
  Report report;
  report.cells = {cell_of("p", "x")};
  std::filesystem::create_directories(folder_ / "out/p_x_cpu");
  std::ofstream(folder_ / "out/p_x_cpu/stale.txt") << "from before";
  std::ofstream(folder_ / "out/p_x_cpu" / kExportMark) << "p/x@cpu\n";
  AnsweringLauncher launcher;
  const auto exported = export_repros(report, {&report.cells[0]}, catalogue, (folder_ / "out").string(), launcher);
  EXPECT_EQ(entries(folder_ / "out"), std::vector<std::string>{"p_x_cpu"});
  EXPECT_FALSE(std::filesystem::exists(folder_ / "out/p_x_cpu/stale.txt"));
  EXPECT_TRUE(std::filesystem::exists(folder_ / "out/p_x_cpu/repro.py"));
}

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(ReproExport, WhatTheExportDidNotWriteIsNeverReplaced) {
  const Catalogue catalogue = {python_probe("p", "x")};
  Report report;
  report.cells = {cell_of("p", "x")};
  // A folder of the user's, a file, a link: each has the cell folder's name.
  std::filesystem::create_directories(folder_ / "folder/p_x_cpu");
  std::ofstream(folder_ / "folder/p_x_cpu/notes.txt") << "mine";
  std::filesystem::create_directories(folder_ / "file");
  std::ofstream(folder_ / "file/p_x_cpu") << "mine";
  std::filesystem::create_directories(folder_ / "out");
  std::filesystem::create_directory_symlink(folder_ / "folder/p_x_cpu", folder_ / "out/p_x_cpu");
  for (const char* output : {"out", "folder", "file"}) {
    AnsweringLauncher launcher;
    EXPECT_THROW(export_repros(report, {&report.cells[0]}, catalogue, (folder_ / output).string(), launcher), UserError)
        << output;
    EXPECT_EQ(entries(folder_ / output), std::vector<std::string>{"p_x_cpu"}) << output;
  }
  EXPECT_EQ(text_of(folder_ / "folder/p_x_cpu/notes.txt"), "mine");
  EXPECT_EQ(text_of(folder_ / "file/p_x_cpu"), "mine");
}

TEST(ReproFolders, NeverLeaveTheirFolderNorHide) {
  EXPECT_EQ(folder_name_of(".."), "_..");
  EXPECT_EQ(folder_name_of("."), "_.");
  EXPECT_EQ(folder_name_of(""), "_");
  EXPECT_EQ(folder_name_of(".hidden"), "_.hidden");
  EXPECT_EQ(folder_name_of("../../etc/passwd"), "_.._.._etc_passwd");
}

// The script from a report whose every string is an injection: Python's own parser finds no call
// the template does not make, and the strings are there as data.
TEST(ReproScript, ReportStringsAreDataInTheScript) {
  if (std::system("python3 -c 'import ast' 2>/dev/null") != 0) GTEST_SKIP() << "no python3";
  const std::string payload =
      "\"\"\"+__import__('os').system('touch PWNED')+\"\"\"\n'); __import__('os').system('x') #\\\n\x01\xff";
  auto cell = deterministic_cell();
  cell.cell.key = payload;
  cell.verdict.message = payload;
  cell.cell.settings = {{"threads", "1"}, {"seed", "3"}};
  auto probe = python_probe("p", "x");
  ReproCell repro;
  repro.cell = &cell;
  repro.probe = &probe;
  repro.variant = &probe.variants[0];
  repro.torch_version = payload;
  repro.inputs = {{"x", "Float", {2}}};
  const auto script = python_script(repro);
  const auto file = std::filesystem::temp_directory_path() / ("repro-audit-script-" + std::to_string(::getpid()));
  std::ofstream(file) << script;
  const auto checker =
      "python3 -c \"import ast, sys\n"
      "tree = ast.parse(open(sys.argv[1], encoding='utf-8').read())\n"
      "calls = [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]\n"
      "sys.exit(1 if 'system' in calls or '__import__' in [getattr(n.func, 'id', '') for n in ast.walk(tree) if "
      "isinstance(n, ast.Call)] else 0)\" " +
      file.string();
  EXPECT_EQ(std::system(checker.c_str()), 0) << script.substr(0, 3000);
  std::filesystem::remove(file);
  repro.inputs = {{payload, "Float", {2}}};  // an input name is a parameter name: an identifier or nothing
  EXPECT_THROW(python_script(repro), std::invalid_argument);
  repro.inputs = {{"x", "Float", {2}}};
  cell.cell.settings = {{"threads", "1); import os; (1"}};
  EXPECT_THROW(python_script(repro), std::invalid_argument);
}

}  // namespace
}  // namespace repro_audit
