// Files that are not what they claim, on the real binary: a report that does not say it is whole, a
// timing no run could give, an input that is no regular file, strings with escape codes. Each is
// refused or shown as data, with a message naming the file and what is wrong.
#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

// The small audit's report other CLI tests read too (cli_tools.h), and its baseline, made once per test
// process by the front end.
const std::string& small_baselined_report() {
  static const std::string report = shared_report("small", kSmallAudit);
  return report;
}

const std::string& small_baseline() {
  static const std::string baseline = [] {
    const auto file = (process_folder("repro-audit-untrusted-input") / "baseline.yaml").string();
    const auto made = run("baseline " + small_baselined_report() + " -o " + file);
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return file;
  }();
  return baseline;
}

class UntrustedInput : public CliTest {
 protected:
  std::string crafted(const std::string& name, const std::function<void(json&)>& change) {
    auto report = json::parse(slurp(small_baselined_report()));
    change(report);
    return write(name, report.dump(1));
  }
  void expect_refused(const std::string& command, const std::string& message) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << command << ": " << result.output;
  }
};

TEST_F(UntrustedInput, AReportThatDoesNotSayItsAuditFinishedPassesNoGate) {
  ASSERT_EQ(run("gate --baseline " + small_baseline() + " --report " + small_baselined_report()).exit_code, 0);
  const auto report = crafted("no-complete.json", [](json& r) { r.erase("complete"); });
  const auto message = report + ": the report does not say its audit finished (no \"complete\" field)";
  expect_refused("gate --baseline " + small_baseline() + " --report " + report, message + "; a gate needs");
  expect_refused("baseline " + report + " -o " + path("b.yaml"), message + "; a baseline needs");
  EXPECT_FALSE(fs::exists(path("b.yaml")));
}

TEST_F(UntrustedInput, ANegativeOrNonFiniteTimeOrCountIsRefusedAtLoadNamingTheFileAndField) {
  const std::pair<std::string, json> edits[] = {{"median_ns", -5}, {"p90_ns", -1}, {"samples", -3}};
  for (const auto& [field, value] : edits) {
    const auto report = crafted(field + ".json", [&](json& r) { r["cells"][0]["timing"][field] = value; });
    for (const auto& command : {"show " + report, "gate --baseline " + small_baseline() + " --report " + report,
                                "compare " + small_baselined_report() + " " + report}) {
      expect_refused(command, report + ": malformed report: cells[0]");
      expect_refused(command, "\"" + field + "\": must be a time or count of 0 or more, not " + value.dump());
    }
  }
  const auto runs = crafted("runs.json", [](json& r) { r["cells"][0]["runs"] = -10; });
  expect_refused("show " + runs, "\"runs\": must be a time or count of 0 or more, not -10");
  const auto huge = write("huge.json", std::string(slurp(small_baselined_report()))
                                           .replace(slurp(small_baselined_report()).find("\"duration_seconds\""), 18,
                                                    "\"duration_seconds\": 1e999, \"x\""));
  // Past any double: refused by the parser, placed by line and column.
  expect_refused("show " + huge, "invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
  expect_refused("show " + huge, "repro-audit: " + huge + ":");
}

// An environment that is no object would read as no environment at all, so a gate would judge the cells
// against the baseline's platform without one: refused by name in every reader.
TEST_F(UntrustedInput, AnEnvironmentThatIsNoObjectIsRefusedAtLoad) {
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, json>>{{"array", json::array({1, 2})}, {"text", "linux"}}) {
    const auto report = crafted("environment-" + name + ".json", [&](json& r) { r["environment"] = value; });
    for (const auto& command : {"show " + report, "gate --baseline " + small_baseline() + " --report " + report,
                                "compare " + small_baselined_report() + " " + report}) {
      expect_refused(command, report + ": malformed report: \"environment\" must be an object");
    }
  }
}

// A field of the wrong type is refused naming the field, however deep: the config's, a cell's flags,
// an observation's run's; `passed: "yes"` is no pass.
TEST_F(UntrustedInput, AFieldOfTheWrongTypeIsRefusedByItsName) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& r) { r["config"]["repeats"] = "many"; },
       "malformed config: [json.exception.type_error.302] \"repeats\""},
      {[](json& r) { r["config"]["full_matrix"] = 1; }, "\"full_matrix\": type must be boolean"},
      {[](json& r) { r["cells"][0]["passed"] = "yes"; }, "\"passed\": type must be boolean, but is string"},
      {[](json& r) { r["cells"][0]["observations"][0]["runs"][0]["digest"] = 5; },
       "\"observations\": \"runs\": \"digest\": type must be string, but is number"},
      {[](json& r) { r["cells"][0]["observations"][0]["warnings"] = "one"; },
       "\"observations\": \"warnings\": type must be array"},
  };
  int index = 0;
  for (const auto& [change, message] : cases) {
    const auto report = crafted("wrong-type-" + std::to_string(index++) + ".json", change);
    expect_refused("show " + report, message);
    expect_refused("gate --baseline " + small_baseline() + " --report " + report, message);
  }
}

// A probe's cell under a setting only py cells take is no cell any audit makes: a crafted report or
// baseline holding one is refused naming the setting, never read as valid.
TEST_F(UntrustedInput, AProbeCellUnderAPySettingIsRefused) {
  const auto report = crafted("py-setting.json", [](json& r) {
    auto& cell = r["cells"][0];
    cell["settings"]["seed_random"] = "on";
    const std::string key = cell["key"];
    cell["key"] = key + (key.find('|') == std::string::npos ? "|" : ",") + "seed_random=on";
  });
  expect_refused("show " + report, "setting seed_random=\"on\" is a py cell's");
  const auto baseline = write("py-setting.yaml",
                              "schema: repro-audit.baseline/2\ncells:\n  sum/f32@cpu|compile=default:\n"
                              "    verdict: deterministic\n");
  expect_refused("gate --baseline " + baseline + " --report " + small_baselined_report(),
                 "setting compile=\"default\" is a py cell's, and \"sum\" is no py cell");
}

// A baseline where a report goes is named for what it is; broken JSON is placed by line and column.
TEST_F(UntrustedInput, ABaselineGivenForAReportIsNamedAndBrokenJsonIsPlaced) {
  for (const auto& command : {"show " + small_baseline(), "baseline " + small_baseline() + " -o " + path("b.yaml")})
    expect_refused(command, small_baseline() +
                                ": a baseline (schema: repro-audit.baseline/2), not a report: give the "
                                "JSON report that `run --json` writes");
  const auto broken = write("broken.json", "{\"schema\": \"repro-audit.report/2\",\n \"cells\": [}");
  for (const auto& command : {"show " + broken, "gate --baseline " + broken + " --report " + small_baselined_report()})
    expect_refused(command, broken + ":2:12: invalid JSON: syntax error while parsing value - unexpected '}'");
}

// A FIFO would block a reader that opens it, /dev/zero never ends: every command's file inputs are
// checked at one place and said for what they are, within seconds.
TEST_F(UntrustedInput, AnInputThatIsNoRegularFileIsSaidWhatItIsWithoutWaiting) {
  const auto fifo = path("f.py");  // .py: `py` takes it for a file
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", path("zero.py"));
  write("model.yaml", "models:\n  - path: " + fifo + "\n    inputs: x.pt\n");
  const std::pair<std::string, std::string> inputs[] = {{fifo, "is a FIFO, not a regular file"},
                                                        {path("zero.py"), "is a character device, not a regular file"}};
  for (const auto& [input, what] : inputs) {
    const auto started = std::chrono::steady_clock::now();
    for (const auto& command :
         {"show " + input, "run --config " + input,
          "gate --baseline " + input + " --report " + small_baselined_report(),
          "gate --baseline " + small_baseline() + " --policy " + input + " --report " + small_baselined_report(),
          "compare " + small_baselined_report() + " " + input, "merge " + input + " -o " + path("m.json"),
          "model " + input + " --input x:f32[4]", "py " + input + ":step", "explain " + input,
          "baseline " + input + " -o " + path("b.yaml")}) {
      const auto result = run(command, "timeout 20");
      EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
      EXPECT_NE(result.output.find(what), std::string::npos) << command << ": " << result.output;
      EXPECT_EQ(result.output.find("does not exist"), std::string::npos) << command << ": " << result.output;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  }
  expect_refused("run --config " + path("model.yaml"), "model file '" + fifo + "' is a FIFO, not a regular file");
  expect_refused("show " + path("missing.json"), "missing.json: cannot read the report: No such file or directory");
}

// Strings from files and arguments are data: no escape code of theirs reaches the terminal, whether in
// the tool's own messages or in CLI11's.
TEST_F(UntrustedInput, EscapeCodesInArgumentsAndFilesArePrintedAsData) {
  const std::string escape = "\"$(printf '\\033[2J\\033]0;owned\\007')\"";
  for (const auto& command : {"show " + small_baselined_report() + " --bogus" + escape, "frobnicate" + escape,
                              "run --device" + escape, "show " + path("x") + escape, "gate --baseline " + escape}) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_EQ(result.output.find('\033'), std::string::npos) << command << ": " << result.output;
    EXPECT_EQ(result.output.find('\007'), std::string::npos) << command << ": " << result.output;
    EXPECT_NE(result.output.find("?[2J"), std::string::npos) << command << ": " << result.output;
  }
}

}  // namespace
