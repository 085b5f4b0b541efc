// Hostile inputs, outputs: one host given twice is one host; a lost standard output is a failed command
// that keeps the audit's journal.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class SecurityOutput : public CliTest {
 protected:
  std::string report(const std::string& name, const std::string& host) {
    const auto file = path(name);
    EXPECT_EQ(run("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --processes 1 "
                  "--quiet --json " +
                  file)
                  .exit_code,
              0);
    auto parsed = json::parse(slurp(file));
    parsed["host"] = host;
    std::ofstream(file) << parsed.dump();
    return file;
  }
};

TEST_F(SecurityOutput, TheSameReportTwiceIsOneHost) {
  const auto a = report("a.json", "node-a");
  fs::copy_file(a, path("copy.json"));
  const auto twice = run("fleet " + a + " " + a + " " + path("copy.json") + " --json " + path("fleet.json"));
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_NE(twice.output.find("nothing was compared: a fleet needs reports of at least two hosts (3 given, 2 left out"),
            std::string::npos)
      << twice.output;
  EXPECT_NE(twice.output.find("copy.json left out: the same run as " + a), std::string::npos) << twice.output;
  const auto fleet = json::parse(slurp(path("fleet.json")));
  EXPECT_EQ(fleet.at("hosts").size(), 1u);
  EXPECT_EQ(fleet.at("duplicates").size(), 2u);
  // Another audit of the same host on the same platform is that host again, not a second one.
  const auto again = report("again.json", "node-a");
  const auto repeated = run("fleet " + a + " " + again);
  EXPECT_EQ(repeated.exit_code, 1) << repeated.output;
  EXPECT_NE(repeated.output.find("left out: another audit of host node-a"), std::string::npos) << repeated.output;
  const auto b = report("b.json", "node-b");
  const auto two = run("fleet " + a + " " + b + " " + again);
  EXPECT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("Fleet: 2 hosts"), std::string::npos) << two.output;
}

TEST_F(SecurityOutput, AFullStandardOutputFailsTheCommandAndKeepsTheJournal) {
  // Standard output to /dev/full, standard error to the test.
  const auto full = [](const std::string& command) {
    return shell("{ " + binary() + " " + command + " > /dev/full; }");
  };
  const auto audit = full(
      "run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 "
      "--processes 1 --journal " +
      path("journal"));
  EXPECT_EQ(audit.exit_code, 2) << audit.output;
  EXPECT_NE(audit.output.find("cannot write to standard output: No space left on device"), std::string::npos)
      << audit.output;
  EXPECT_NE(audit.output.find("the audit is kept in its journal"), std::string::npos) << audit.output;
  EXPECT_TRUE(fs::exists(path("journal"))) << "the journal went with the lost matrix";
  const auto a = report("a.json", "node-a");
  const auto b = report("b.json", "node-b");
  for (const std::string& command :
       std::vector<std::string>{"show " + a, "env", "list", "fleet " + a + " " + b, "compare " + a + " " + b}) {
    const auto result = full(command);
    EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find("cannot write to standard output"), std::string::npos) << command;
  }
}

TEST_F(SecurityOutput, AClosedPipeIsALostOutputNotASignal) {
  // The reader closes the pipe at once; the command, loading libtorch, writes its listing later.
  const auto script =
      write("pipe.sh", "set -o pipefail\n\"$1\" list --all | (exec 0<&-; sleep 1)\necho \"status=$?\"\n");
  const auto result = shell("bash " + script + " " + binary());
  EXPECT_NE(result.output.find("status=2"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cannot write to standard output: Broken pipe"), std::string::npos) << result.output;
}

}  // namespace
