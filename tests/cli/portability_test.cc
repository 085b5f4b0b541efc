// Why did the bits change: the ATen capability as a setting, portability levels measured on the real
// binary, and `explain` finding the knob that reproduces another host's bits. Which levels differ is
// the host's business (a CPU without AVX2 runs the generic kernels natively): tests that need two
// different kernels skip on a host where they agree.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_tools.h"
#include "common/pattern.h"

namespace {

using namespace testing_cli;
using nlohmann::json;
using repro_audit::Pattern;

// Upsampling's vectorised kernels round otherwise than the generic ones (inputs identical under both).
const std::string kLinear =
    "--device cpu --probe interpolate/linear-f32 --profile default --axis threads=2 --repeats 2 --processes 1 "
    "--no-cost";

class Portability : public CliTest {
 protected:
  json report(const std::string& name) { return json::parse(slurp(path(name))); }
  std::string digest(const json& report) { return report.at("cells").at(0).at("digest"); }
};

TEST_F(Portability, ABaselineOfTheGenericKernelsIsExplainedByCpuCapabilityDefault) {
  ASSERT_EQ(run("run " + kLinear + " --json " + path("before.json"), "ATEN_CPU_CAPABILITY=default").exit_code, 0);
  const auto before = report("before.json");
  // The user's variable is honoured and recorded as that platform's.
  EXPECT_EQ(before.at("environment").at("aten_cpu_capability"), "DEFAULT");
  EXPECT_EQ(before.at("environment").at("numerics_environment").at("ATEN_CPU_CAPABILITY"), "default");
  // inherit is the default: the key is as before
  EXPECT_EQ(before.at("cells").at(0).at("key"), "interpolate/linear-f32@cpu");
  ASSERT_EQ(run("run " + kLinear + " --json " + path("after.json"), "env -u ATEN_CPU_CAPABILITY").exit_code, 0);
  if (digest(before) == digest(report("after.json")))
    GTEST_SKIP() << "this CPU's generic and native kernels give the same upsampling";

  const auto gate = run("compare " + path("before.json") + " " + path("after.json"));
  EXPECT_NE(gate.output.find("ATen capability DEFAULT -> "), std::string::npos) << gate.output;

  // AFTER omitted: the cell is audited here, then searched.
  const auto explained = run("explain " + path("before.json") + " --json " + path("explain.json") + " --markdown " +
                                 path("explain.md") + " --html " + path("explain.html"),
                             "env -u ATEN_CPU_CAPABILITY");
  EXPECT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_NE(explained.output.find("reproduced by cpu_capability=default"), std::string::npos) << explained.output;
  EXPECT_NE(explained.output.find("pin ATEN_CPU_CAPABILITY=default on both to get identical bits"), std::string::npos);
  const auto explanation = report("explain.json");
  EXPECT_EQ(explanation.at("schema"), "repro-audit.explanation/1");
  const auto& cell = explanation.at("cells").at(0);
  EXPECT_EQ(cell.at("knobs").size(), 1u);
  EXPECT_EQ(cell.at("knobs").at(0).at("setting"), "cpu_capability");
  EXPECT_EQ(cell.at("knobs").at(0).at("value"), "default");
  EXPECT_GT(explanation.at("search").at("seconds").get<double>(), 0);
  EXPECT_NE(slurp(path("explain.html")).find("cpu_capability=default"), std::string::npos);

  // The command it prints reproduces BEFORE's bits.
  const auto check = cell.at("command").get<std::string>();
  ASSERT_EQ(check.rfind("repro-audit run ", 0), 0u) << check;
  ASSERT_EQ(run(check.substr(std::string("repro-audit ").size()) + " --repeats 2 --json " + path("check.json"),
                "env -u ATEN_CPU_CAPABILITY")
                .exit_code,
            0);
  EXPECT_EQ(digest(report("check.json")), digest(before));

  // Both snapshots given: the same answer.
  const auto both = run("explain " + path("before.json") + " " + path("after.json"), "env -u ATEN_CPU_CAPABILITY");
  EXPECT_EQ(both.exit_code, 0) << both.output;
  EXPECT_NE(both.output.find("reproduced by cpu_capability=default"), std::string::npos) << both.output;
}

// The kLinear audit's report (made once for every test of this build) with every digest zeros: bits no
// knob reproduces, so explain's search runs every stage. Written to `file`; false if it was not made.
bool unreproducible_report(const std::string& file) {
  const auto made = shared_report("linear", kLinear);
  if (made.empty()) return false;
  auto before = json::parse(slurp(made));
  before["cells"][0]["digest"] = std::string(32, '0');
  for (auto& observation : before["cells"][0]["observations"])
    for (auto& each : observation["runs"]) {
      each["digest"] = std::string(32, '0');
      for (auto& output : each["outputs"]) output["digest"] = std::string(32, '0');
    }
  std::ofstream(file) << before.dump();
  return true;
}

TEST_F(Portability, BitsNoKnobReproducesAreSaidToBeUnexplained) {
  ASSERT_TRUE(unreproducible_report(path("edited.json")));
  const auto explained = run("explain " + path("edited.json") + " --time-limit 300 --json " + path("explain.json"));
  EXPECT_EQ(explained.exit_code, 1) << explained.output;
  EXPECT_NE(explained.output.find("not explained by any knob tried"), std::string::npos) << explained.output;
  EXPECT_FALSE(report("explain.json").at("cells").at(0).at("explained").get<bool>());
}

// The time limit bounds the whole command: a stage that would run past it is stopped there, and no
// stage starts without time left. The margin is what the binary does outside the limit's clock and
// after it: starting (libtorch loads before the clock starts, about 1 s here), the supervisor's poll
// for the stop (0.5 s), the stopped worker's exit, and writing the outputs.
TEST_F(Portability, TheTimeLimitBoundsTheWholeExplainCommand) {
  ASSERT_TRUE(unreproducible_report(path("edited.json")));  // bits no knob reproduces: every stage would run
  constexpr double kLimit = 6, kMargin = 3;
  const auto started = std::chrono::steady_clock::now();
  const auto explained = run("explain " + path("edited.json") + " --time-limit " + std::to_string(kLimit) + " --json " +
                             path("explain.json"));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(explained.exit_code, 1) << explained.output;
  EXPECT_TRUE(report("explain.json").at("search").at("time_limit_reached").get<bool>()) << explained.output;
  EXPECT_LT(took.count(), kLimit + kMargin) << explained.output;
}

// The longest line of a command's output, in characters a terminal shows (UTF-8 code points).
std::size_t longest_line(const std::string& output) {
  std::size_t longest = 0, width = 0;
  for (const unsigned char c : output) {
    if (c == '\n') {
      longest = std::max(longest, width);
      width = 0;
    } else if ((c & 0xC0) != 0x80) {
      ++width;
    }
  }
  return std::max(longest, width);
}

// One portability audit of sum, bincount and max pooling (every column a process that runs all three),
// made once for every test of this build: its report, what the terminal showed and its Markdown.
struct PortabilityAudit {
  json report;
  std::string output;
  std::string markdown;
};
PortabilityAudit portability_audit() {
  const auto file = shared_report_made_by("portability", [](const fs::path& folder, const std::string& file) {
    const auto made = shell(std::string(test_paths::kBinary) +
                            " run --device cpu --probe sum/f32 --probe bincount/f32 --probe pooling/max2d-f32 "
                            "--matrix portability --repeats 2 --no-cost --json " +
                            file + " --markdown " + (folder / "portability.md").string());
    EXPECT_EQ(made.exit_code, 0) << made.output;
    std::ofstream(folder / "portability.txt") << made.output;
    return made.exit_code == 0;
  });
  if (file.empty()) return {};
  const auto folder = fs::path(file).parent_path();
  return {json::parse(slurp(file)), slurp(folder / "portability.txt"), slurp(folder / "portability.md")};
}

TEST_F(Portability, ThePortabilityMatrixPutsSumBelowIsaInvariant) {
  const auto audited = portability_audit();
  ASSERT_FALSE(audited.report.is_null()) << "the portability audit failed";
  EXPECT_NE(audited.output.find("portability"), std::string::npos);
  // Its dozen columns' labels are 45-55 characters each: the matrix still fits a 120-column terminal
  // (letters with a legend), and so do the Markdown table's source lines.
  EXPECT_LE(longest_line(audited.output), 120u) << audited.output;
  EXPECT_NE(audited.output.find("A: cpu_capability=native"), std::string::npos) << audited.output;
  const auto verdicts = audited.markdown.find("## Verdicts");
  ASSERT_NE(verdicts, std::string::npos) << audited.markdown;
  const auto matrix = audited.markdown.substr(verdicts, audited.markdown.find("\n## ", verdicts + 1) - verdicts);
  EXPECT_LE(longest_line(matrix), 120u) << matrix;
  EXPECT_NE(matrix.find("- A: cpu\\_capability=native"), std::string::npos) << matrix;
  const auto& result = audited.report;
  std::set<std::string> capabilities;
  for (const auto& cell : result.at("cells")) capabilities.insert(cell.at("settings").at("cpu_capability"));
  EXPECT_TRUE(capabilities.count("native") && capabilities.count("default")) << result.at("columns").dump();
  const auto& entries = result.at("portability");
  const auto entry = std::find_if(entries.begin(), entries.end(), [](const json& each) {
    return each.at("probe") == "sum" && each.at("settings").get<std::string>().empty();
  });
  ASSERT_NE(entry, entries.end()) << entries.dump();
  EXPECT_NE(entry->at("level"), "isa-invariant");  // the thread count changes sum's bits
  EXPECT_EQ(entry->at("level"), "cross-process") << entry->at("limit");
  // The fingerprint is the user's environment, not that of a worker with a capability pinned.
  const auto env = json::parse(run("env").output);
  EXPECT_EQ(result.at("environment").at("aten_cpu_capability"), env.at("aten_cpu_capability"));
}

// The cross-host case on one host: a baseline recorded with oneDNN capped at SSE4.1 stands for an older
// host. `explain` against an uncapped audit names the knob that reproduces it, onednn_max_cpu_isa=SSE41:
// from the baseline's recorded variable, and, with the variable taken out (a stranger's host that
// differs only in its CPU), from the changed kernels' names; either way in the first stage, and it says
// the rest of the search was not needed.
TEST_F(Portability, AnIsaCapIsExplainedByTheKnobThatSetsIt) {
  const std::string audit = "--device cpu --probe conv/f32 --profile default --axis threads=1 --repeats 2 --no-cost";
  ASSERT_EQ(run("run " + audit + " --json " + path("capped.json"), "ONEDNN_MAX_CPU_ISA=SSE41").exit_code, 0);
  ASSERT_EQ(run("run " + audit + " --json " + path("here.json"), "env -u ONEDNN_MAX_CPU_ISA").exit_code, 0);
  auto capped = report("capped.json");
  if (digest(capped) == digest(report("here.json")))
    GTEST_SKIP() << "this CPU's oneDNN gives conv/f32 the same bits capped at SSE4.1";
  EXPECT_EQ(capped.at("environment").at("numerics_environment").at("ONEDNN_MAX_CPU_ISA"), "SSE41");

  const auto by_variable =
      run("explain " + path("capped.json") + " --json " + path("explain.json"), "env -u ONEDNN_MAX_CPU_ISA");
  EXPECT_EQ(by_variable.exit_code, 0) << by_variable.output;
  EXPECT_NE(by_variable.output.find("pin ONEDNN_MAX_CPU_ISA=SSE41 on both"), std::string::npos) << by_variable.output;

  capped["environment"]["numerics_environment"].erase("ONEDNN_MAX_CPU_ISA");
  std::ofstream(path("stranger.json")) << capped.dump();
  const auto by_kernels =
      run("explain " + path("stranger.json") + " --json " + path("explain.json"), "env -u ONEDNN_MAX_CPU_ISA");
  EXPECT_EQ(by_kernels.exit_code, 0) << by_kernels.output;
  const auto explanation = report("explain.json");
  const auto& knobs = explanation.at("cells").at(0).at("knobs");
  ASSERT_EQ(knobs.size(), 1u) << explanation.dump();
  EXPECT_EQ(knobs.at(0).at("setting"), "onednn_max_cpu_isa");
  EXPECT_EQ(knobs.at(0).at("value"), "SSE41");
  EXPECT_NE(explanation.at("search").at("stopped_early").get<std::string>().find("every changed cell was explained"),
            std::string::npos)
      << explanation.at("search").dump();
  EXPECT_NE(by_kernels.output.find("stopped early"), std::string::npos) << by_kernels.output;
}

// Levels come from the digests alone: the two matrix audits below take no timings (--no-cost: no timing
// rounds in fresh workers, the second process's workers side by side), half their workers.
// Ops whose arithmetic cannot depend on the ISA: with inputs identical under every capability, the
// portability matrix shows them ISA-invariant (under ATen's generator their inputs differed per
// capability, and so did their bits).
TEST_F(Portability, ThePortabilityMatrixPutsBincountAndMaxPoolingAtIsaInvariant) {
  const auto audited = portability_audit();
  ASSERT_FALSE(audited.report.is_null()) << "the portability audit failed";
  const auto& result = audited.report;
  EXPECT_EQ(result.at("config").at("input_scheme"), 2);
  std::set<std::string> variants;
  for (const auto& entry : result.at("portability")) {
    if (!entry.at("settings").get<std::string>().empty()) continue;  // the defaults' in-process settings
    if (entry.at("probe") == "sum") continue;                        // the test above
    variants.insert(entry.at("probe").get<std::string>() + "/" + entry.at("variant").get<std::string>());
    EXPECT_EQ(entry.at("level"), "isa-invariant") << entry.dump();
  }
  EXPECT_EQ(variants, (std::set<std::string>{"bincount/f32", "pooling/max2d-f32"}));
  // One input digest per variant, under every capability, branch and thread count.
  std::map<std::string, std::set<std::string>> inputs;
  for (const auto& cell : result.at("cells"))
    for (const auto& observation : cell.at("observations"))
      inputs[cell.at("probe").get<std::string>() + "/" + cell.at("variant").get<std::string>()].insert(
          observation.at("input_digest"));
  EXPECT_EQ(inputs.size(), 3u);
  for (const auto& [variant, digests] : inputs) EXPECT_EQ(digests.size(), 1u) << variant;
}

// A baseline written before the input scheme was recorded (its inputs from ATen's generator) still
// gates: the gate makes its inputs the same way, so nothing drifts on the host that recorded it; an
// audit with today's inputs compared with it shows the inputs changed.
TEST_F(Portability, ABaselineOfTheOlderInputSchemeGatesWithItsOwnInputs) {
  const std::string config =
      "device: cpu\nprobes: {index_add: [f32], matmul: [f32], bincount: [f64]}\n"
      "profiles: [default]\naxes: {threads: [1]}\nrepeats: 2\nprocesses: 1\n";
  write("old.yaml", config + "input_scheme: 1\n");
  ASSERT_EQ(run("run --config " + path("old.yaml") + " --json " + path("old.json")).exit_code, 0);
  auto old_report = report("old.json");
  EXPECT_EQ(old_report.at("config").at("input_scheme"), 1);
  old_report["config"].erase("input_scheme");  // as an older version wrote it
  std::ofstream(path("older.json")) << old_report.dump();
  ASSERT_EQ(run("baseline " + path("older.json") + " -o " + path("base.yaml")).exit_code, 0);
  auto baseline = slurp(path("base.yaml"));
  const auto line = baseline.find("input_scheme: 1\n");
  ASSERT_NE(line, std::string::npos) << baseline;
  baseline.erase(line, std::string("input_scheme: 1\n").size());
  write("base.yaml", baseline);

  write("audit.yaml", config);  // today's default scheme: the baseline's wins
  const auto gate = run("gate --baseline " + path("base.yaml") + " --config " + path("audit.yaml"));
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_NE(gate.output.find("its inputs were made with input scheme 1 (ATen's generator)"), std::string::npos)
      << gate.output;
  // Every cell's bits agree with the baseline's: SAME, or only a timing class (SLOWER, FASTER) where a
  // neighbouring test's load moved a median; never DRIFT or another digest.
  const auto cells = Pattern(R"(Cells: ([^(\n]*))").search(gate.output);
  ASSERT_TRUE(cells) << gate.output;
  int agreeing = 0;
  for (const auto& match : Pattern(R"((\d+) ([A-Z-]+))").search_all((*cells)[1])) {
    EXPECT_TRUE(match[2] == "SAME" || match[2] == "SLOWER" || match[2] == "FASTER") << gate.output;
    agreeing += std::stoi(match[1]);
  }
  EXPECT_EQ(agreeing, 3) << gate.output;
  EXPECT_EQ(gate.output.find("DRIFT"), std::string::npos) << gate.output;

  ASSERT_EQ(run("run --config " + path("audit.yaml") + " --json " + path("new.json")).exit_code, 0);
  EXPECT_EQ(report("new.json").at("config").at("input_scheme"), 2);
  const auto compared = run("compare " + path("base.yaml") + " " + path("new.json"));
  EXPECT_NE(compared.output.find("input scheme 1 (ATen's generator) -> 2 (portable)"), std::string::npos)
      << compared.output;
  EXPECT_NE(compared.output.find("DRIFT"), std::string::npos) << compared.output;
}

}  // namespace
