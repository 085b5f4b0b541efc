// Hostile inputs, reports: a report is untrusted input. Its names must fit their grammar or the report
// is refused by every reader; its free text reaches generated scripts and READMEs only as data; `repro`
// writes only inside -o, all of it or nothing; a worker killed at any moment ends as that worker's
// failure, never the audit's. (A signal while outputs are written: output_files_test.cc, at every file.)
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_tools.h"
#include "python_fixtures.h"
#include "python_modules.h"
#include "test_paths.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

std::string test_python() { return test_paths::kPython; }

bool python_has_torch() {
  static const bool has = test_paths::python_has_modules(test_python(), "torch");
  return has;
}

// One small audit's report, made once for every test of the build (read only): sum/f32 under strict, one
// thread.
const std::string& audited_report() {
  static const std::string report =
      shared_report("sum-f32-strict-1-thread",
                    "--device cpu --probe sum/f32 --profile strict --axis threads=1 --repeats 2 --processes 1");
  return report;
}

// Files under `folder`, recursively, with their paths relative to it.
std::vector<std::string> files_under(const fs::path& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(folder, error))
    files.push_back(entry.path().lexically_relative(folder).string());
  std::sort(files.begin(), files.end());
  return files;
}

// The children of `pid` that run a worker: their program has replaced the audit's. A child spawned a
// moment ago may not have yet; stopped there, it would hold its parent inside posix_spawn (vfork).
std::vector<pid_t> workers_of(pid_t pid) {
  std::vector<pid_t> workers;
  for (const auto child : children_of(pid)) {
    std::ifstream file("/proc/" + std::to_string(child) + "/cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const auto first_end = cmdline.find('\0');
    if (first_end != std::string::npos && cmdline.compare(first_end + 1, 7, std::string("worker\0", 7)) == 0)
      workers.push_back(child);
  }
  return workers;
}

class HostileReport : public CliTest {
 protected:
  // The audited report with `change` applied to its JSON, written as `name`.
  std::string crafted(const std::string& name, const std::function<void(json&)>& change) {
    auto report = json::parse(slurp(audited_report()));
    change(report);
    return write(name, report.dump(2));
  }
  // Python that leaves a mark when it runs: in every quoting context a script or shell line has.
  std::string payload() const {
    const auto mark = path("MARK");
    return "\"\"\"+__import__('os').system('touch " + mark + "')+\"\"\"\n'); __import__('os').system('touch " + mark +
           "') #\n\"); __import__('os').system('touch " + mark + "') #\\\n\x1b[31m`$(touch " + mark + ")`";
  }
};

TEST_F(HostileReport, NamesThatBreakTheirGrammarAreRefusedByEveryReader) {
  const std::vector<std::pair<std::string, std::function<void(json&)>>> changes = {
      {"an empty key", [](json& r) { r["cells"][0]["key"] = ""; }},
      {"a key '..'", [](json& r) { r["cells"][0]["key"] = ".."; }},
      {"a key that is not its fields'", [](json& r) { r["cells"][0]["key"] = "sum/f64@cpu|threads=1"; }},
      {"a probe with a path", [](json& r) { r["cells"][0]["probe"] = "../../etc"; }},
      {"a variant with quotes", [](json& r) { r["cells"][0]["variant"] = "f32\"\"\"; import os"; }},
      {"a device with a command", [](json& r) { r["cells"][0]["device"] = "cpu; rm -rf ~"; }},
      {"threads that are code", [](json& r) { r["cells"][0]["settings"]["threads"] = "1); import os; (1"; }},
      {"a seed that is code", [](json& r) { r["cells"][0]["settings"]["seed"] = "0\nimport os"; }},
      {"a label with escape codes", [](json& r) { r["cells"][0]["label"] = "strict\x1b[2J"; }},
      {"an unknown setting with a separator", [](json& r) { r["cells"][0]["settings"]["future"] = "a,b=c"; }},
      {"a string warm-up", [](json& r) { r["config"]["warmup"] = "1; import os"; }},
      {"a key twice", [](json& r) { r["cells"].push_back(r["cells"][0]); }},
  };
  for (const auto& [what, change] : changes) {
    const auto report = crafted("bad.json", change);
    const auto exported = run("repro " + report + " '*' -o " + path("out"));
    EXPECT_EQ(exported.exit_code, 2) << what << ": " << exported.output;
    EXPECT_NE(exported.output.find("malformed report"), std::string::npos) << what << ": " << exported.output;
    EXPECT_TRUE(files_under(path("out")).empty()) << what;
    EXPECT_EQ(run("show " + report).exit_code, 2) << what;
    // Before, an empty key made the real cell MISSING and the comparison passed.
    EXPECT_EQ(run("compare " + audited_report() + " " + report).exit_code, 2) << what;
  }
  EXPECT_FALSE(fs::exists(path("MARK")));
}

TEST_F(HostileReport, FreeTextReachesScriptsAndReadmesOnlyAsData) {
  if (!python_has_torch()) GTEST_SKIP() << test_python() << " cannot import torch";
  const auto text = payload();
  const auto report = crafted("hostile.json", [&](json& r) {
    r["tool_version"] = text;
    r["host"] = text;
    r["environment"]["torch"] = text;
    for (auto& cell : r["cells"]) {
      cell["message"] = text;
      cell["documented"] = text;
      cell["warnings"] = {text};
      cell["contradiction"] = {{"expected", text}, {"text", text}, {"breaks_audit", false}};
    }
  });
  const auto exported = run("repro " + report + " '*' -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_EQ(exported.output.find('\x1b'), std::string::npos) << "escape codes reached the terminal";
  const auto folder = path("out/sum_f32_cpu_deterministic_algorithms=on_threads=1");
  ASSERT_TRUE(fs::exists(folder + "/repro.py")) << exported.output;
  const auto ran =
      shell("cd " + path("") + " && " + test_python() + " " + folder + "/repro.py --runs 2 --processes 1 --json");
  EXPECT_EQ(ran.output.find("SyntaxError"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("\"verdict\": \"deterministic\""), std::string::npos) << ran.output;
  EXPECT_FALSE(fs::exists(path("MARK"))) << "the report's text ran as code";
  const auto readme = slurp(folder + "/README.md");
  EXPECT_EQ(readme.find('\x1b'), std::string::npos);
  EXPECT_EQ(readme.find("\n'); __import__"), std::string::npos) << "the payload started a line of its own";
  EXPECT_NE(readme.find("pip install torch==VERSION"), std::string::npos) << "a torch version that is no version";
}

// A model file whose name is code: the script loads that file and runs nothing else.
TEST_F(HostileReport, AModelPathMadeOfCodeIsAFileNameInTheScript) {
  if (!python_has_torch()) GTEST_SKIP() << test_python() << " cannot import torch";
  // No '/' in a file name: the mark is made in the folder the script runs in.
  const auto mark = path("MARK");
  const auto model = path("m\"\"\"; open(\"MARK\", \"w\"); \"\"\"; open(\"MARK\", \"w\") #.pt");
  ASSERT_TRUE(scripted_linear(folder_, test_python(), model));
  const auto report = path("model.json");
  const auto audit = run("model '" + model + "' --name m --input x:f32[4,8] --profile strict --axis threads=1 " +
                         "--repeats 2 --processes 1 --quiet --json " + report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  const auto exported = run("repro " + report + " model --model '" + model + "' -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto folder = path("out/model.m_forward_cpu_deterministic_algorithms=on_threads=1");
  const auto ran =
      shell("cd " + path("") + " && " + test_python() + " " + folder + "/repro.py --runs 2 --processes 1 --json");
  EXPECT_NE(ran.output.find("\"verdict\": \"deterministic\""), std::string::npos) << ran.output;
  EXPECT_FALSE(fs::exists(mark)) << "the model's path ran as code";
}

// An interrupted export leaves nothing: no cell folder, no staging folder.
TEST_F(HostileReport, AnInterruptedExportLeavesNothingBehind) {
  fs::create_directories(path("out"));
  const auto pid = start_group("repro " + audited_report() + " '*' -o " + path("out"), path("log"));
  const auto staging = [&] {
    for (const auto& name : files_under(path("out")))
      if (name.rfind(".repro-audit-export-", 0) == 0) return true;
    return false;
  };
  ASSERT_TRUE(wait_until(staging, pid)) << slurp(path("log"));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), 130) << slurp(path("log"));
  EXPECT_TRUE(files_under(path("out")).empty()) << "left: " << files_under(path("out")).front();
}

// Workers killed at every moment, ahead of their request too (SIGPIPE when the supervisor then writes
// it): each is that worker's failure, and the audit ends with its matrix and report.
TEST_F(HostileReport, KilledWorkersNeverEndTheAudit) {
  const auto pid = start_group(
      "run --device cpu --probe sum --profile default --profile strict --repeats 3 "
      "--timing-rounds 3 --quiet --json " +
          path("report.json"),
      path("log"));
  int killed = 0;
  for (int attempt = 0; attempt < 4000 && ::kill(pid, 0) == 0; ++attempt) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      EXPECT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status) << ": " << slurp(path("log"));
      EXPECT_LE(WEXITSTATUS(status), 1) << slurp(path("log"));
      EXPECT_TRUE(fs::exists(path("report.json"))) << slurp(path("log"));
      std::cerr << killed << " workers killed\n";
      return;
    }
    for (const auto child : children_of(pid))
      if (::kill(child, SIGKILL) == 0) ++killed;
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt % 7 * 10));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ADD_FAILURE() << "the audit did not end in time";
}

// An empty value or a NaN names nothing: refused before any work, never silently ignored.
TEST_F(HostileReport, EmptyAndNonFiniteOptionValuesAreRefused) {
  const std::vector<std::string> commands = {
      "run --probe sum/f32 --json ''",
      "run --probe sum/f32 --shard ''",
      "run --probe sum/f32 --budget ''",
      "repro " + audited_report() + " '*' -o ''",
      "selftest --python ''",
      "explain " + audited_report() + " --time-limit nan",
      "explain " + audited_report() + " --time-limit inf",
  };
  for (const auto& command : commands) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_EQ(result.output.find("internal error"), std::string::npos) << command << ": " << result.output;
  }
}

// Bytes that are not UTF-8 in the environment are text to show, not a reason to fail.
TEST_F(HostileReport, AnEnvironmentVariableThatIsNotUtf8IsShownReplaced) {
  const auto result = run("env", "MKL_CBWR=$(printf 'AVX\\377\\376')");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("AVX"), std::string::npos) << result.output;  // U+FFFD, or ? in ASCII
}

// A worker stopped (SIGSTOP) before its first cell is replaced: no cell fails, and the audit does not
// wait out the start limit.
TEST_F(HostileReport, AWorkerStoppedAtItsStartIsReplaced) {
  const auto begun = std::chrono::steady_clock::now();
  const auto pid = start_group(
      "run --device cpu --probe sum/f32 --profile strict --axis threads=1 --repeats 2 "
      "--processes 1 --timing-rounds 1 --quiet --json " +
          path("report.json"),
      path("log"));
  int stopped = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto child : workers_of(pid))
          if (::kill(child, SIGSTOP) == 0) stopped = child;
        return stopped != 0;
      },
      pid))
      << slurp(path("log"));
  EXPECT_EQ(wait_exit(pid), 0) << slurp(path("log"));
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(40)) << "waited out the start limit";
  const auto report = json::parse(slurp(path("report.json")));
  EXPECT_EQ(report.at("cells").at(0).at("verdict"), "deterministic") << slurp(path("log"));
  ::kill(stopped, SIGKILL);
}

}  // namespace
