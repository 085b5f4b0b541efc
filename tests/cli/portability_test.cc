// Why did the bits change: the ATen capability as a setting, portability levels measured on the real
// binary, and `explain` finding the knob that reproduces another host's bits. Which levels differ is
// the host's business (a CPU without AVX2 runs the generic kernels natively): tests that need two
// different kernels skip on a host where they agree.
#include <nlohmann/json.hpp>

#include <set>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

const std::string kSum = "--device cpu --probe sum/f32 --profile default --axis threads=2 --repeats 2 --processes 1";

class Portability : public CliTest {
 protected:
  json report(const std::string& name) { return json::parse(slurp(path(name))); }
  std::string digest(const json& report) { return report.at("cells").at(0).at("digest"); }
};

TEST_F(Portability, ABaselineOfTheGenericKernelsIsExplainedByCpuCapabilityDefault) {
  ASSERT_EQ(run("run " + kSum + " --json " + path("before.json"), "ATEN_CPU_CAPABILITY=default").exit_code, 0);
  const auto before = report("before.json");
  // The user's variable is honoured and recorded as that platform's.
  EXPECT_EQ(before.at("environment").at("aten_cpu_capability"), "DEFAULT");
  EXPECT_EQ(before.at("environment").at("numerics_environment").at("ATEN_CPU_CAPABILITY"), "default");
  EXPECT_EQ(before.at("cells").at(0).at("key"), "sum/f32@cpu");  // inherit is the default: the key is as before
  ASSERT_EQ(run("run " + kSum + " --json " + path("after.json"), "env -u ATEN_CPU_CAPABILITY").exit_code, 0);
  if (digest(before) == digest(report("after.json")))
    GTEST_SKIP() << "this CPU's generic and native kernels give the same sum";

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

TEST_F(Portability, BitsNoKnobReproducesAreSaidToBeUnexplained) {
  ASSERT_EQ(run("run " + kSum + " --json " + path("before.json")).exit_code, 0);
  auto before = report("before.json");
  before["cells"][0]["digest"] = "00000000000000000000000000000000";
  for (auto& observation : before["cells"][0]["observations"])
    for (auto& each : observation["runs"]) {
      each["digest"] = "00000000000000000000000000000000";
      for (auto& output : each["outputs"]) output["digest"] = "00000000000000000000000000000000";
    }
  std::ofstream(path("edited.json")) << before.dump();
  const auto explained = run("explain " + path("edited.json") + " --time-limit 300 --json " + path("explain.json"));
  EXPECT_EQ(explained.exit_code, 1) << explained.output;
  EXPECT_NE(explained.output.find("not explained by any knob tried"), std::string::npos) << explained.output;
  EXPECT_FALSE(report("explain.json").at("cells").at(0).at("explained").get<bool>());
}

TEST_F(Portability, ThePortabilityMatrixPutsSumBelowIsaInvariant) {
  const auto audited =
      run("run --device cpu --probe sum/f32 --matrix portability --repeats 2 --json " + path("portability.json"));
  ASSERT_EQ(audited.exit_code, 0) << audited.output;
  EXPECT_NE(audited.output.find("portability"), std::string::npos);
  const auto result = report("portability.json");
  std::set<std::string> capabilities;
  for (const auto& cell : result.at("cells")) capabilities.insert(cell.at("settings").at("cpu_capability"));
  EXPECT_TRUE(capabilities.count("native") && capabilities.count("default")) << result.at("columns").dump();
  const auto& entry = result.at("portability").at(0);
  EXPECT_EQ(entry.at("probe"), "sum");
  EXPECT_NE(entry.at("level"), "isa-invariant");  // the thread count changes sum's bits
  EXPECT_EQ(entry.at("level"), "cross-process") << entry.at("limit");
  // The fingerprint is the user's environment, not that of a worker with a capability pinned.
  const auto env = json::parse(run("env").output);
  EXPECT_EQ(result.at("environment").at("aten_cpu_capability"), env.at("aten_cpu_capability"));
}

}  // namespace
