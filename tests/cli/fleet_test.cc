// `fleet` on the real binary: reports of real audits, one of them run with the generic kernels
// (ATEN_CPU_CAPABILITY=default) standing for another host's ISA; nothing compared is no pass.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

const std::string kFleetAudit =
    "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --no-cost";

class FleetCommand : public CliTest {
 protected:
  // The report of an audit, as host `name` would have written it.
  std::string host_report(const std::string& name, const std::string& prefix = "") {
    const auto file = path(name + ".json");
    EXPECT_EQ(run(kFleetAudit + " --json " + file, prefix).exit_code, 0);
    auto report = json::parse(slurp(file));
    report["host"] = name;
    std::ofstream(file) << report.dump();
    return file;
  }
};

TEST_F(FleetCommand, ComparesHostsAndWritesEveryFormat) {
  const auto a = host_report("node-a"), b = host_report("node-b");
  const auto c = host_report("node-c", "ATEN_CPU_CAPABILITY=default");
  const auto result = run("fleet " + a + " " + b + " " + c + " --html " + path("fleet.html") + " --markdown " +
                          path("fleet.md") + " --json " + path("fleet.json"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Fleet: 3 hosts on 2 platforms, 1 cells"), std::string::npos) << result.output;
  const auto fleet = json::parse(slurp(path("fleet.json")));
  EXPECT_EQ(fleet.at("schema"), "repro-audit.fleet/1");
  const auto& cell = fleet.at("cells").at(0);
  EXPECT_EQ(cell.at("hosts").at("node-a"), cell.at("hosts").at("node-b"));
  // The generic kernels may or may not give this CPU's native bits: either way the fleet says which.
  if (cell.at("category") == "split") {
    EXPECT_EQ(cell.at("field"), "ATen capability") << cell.dump();
  } else {
    EXPECT_EQ(cell.at("category"), "portable") << cell.dump();
  }
  EXPECT_NE(slurp(path("fleet.html")).find("node-c"), std::string::npos);
  EXPECT_NE(slurp(path("fleet.md")).find("| node-a |"), std::string::npos);
}

TEST_F(FleetCommand, NothingComparedIsNoPass) {
  const auto a = host_report("node-a");
  const auto alone = run("fleet " + a);
  EXPECT_EQ(alone.exit_code, 1) << alone.output;
  EXPECT_NE(alone.output.find("nothing was compared: a fleet needs reports of at least two hosts"), std::string::npos)
      << alone.output;
  const auto bad = run("fleet " + a + " " + write("notes.json", "{\"hello\": 1}"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("notes.json: not a repro-audit report"), std::string::npos) << bad.output;
}

}  // namespace
