// Nothing falsely green: an interrupted cell is never a verdict, and an audit or gate that compared
// nothing does not pass.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class HonestVerdicts : public CliTest {
 protected:
  // Every journaled cell run's status.
  std::vector<std::string> journaled_statuses(const fs::path& journal) {
    std::vector<std::string> statuses;
    for (const auto& file : fs::directory_iterator(journal))
      if (file.path().filename().string().rfind("cell-", 0) == 0)
        statuses.push_back(json::parse(slurp(file.path())).at("observation").at("status").get<std::string>());
    return statuses;
  }
  // Made once for every test (cli_tools.h), read only.
  static std::string small_report() { return shared_report("small", kSmallAudit); }
};

TEST_F(HonestVerdicts, CtrlCOnTheTerminalReachesNoWorkerAndNeverBecomesACrash) {
  // A terminal's Ctrl-C signals the whole foreground process group. Sent while the first worker is
  // still loading libtorch, then again in a second audit once cells have finished. No timing rounds:
  // nothing here reads a cost.
  for (const int journaled_before_interrupt : {0, 1}) {
    const auto journal = folder_ / ("journal-" + std::to_string(journaled_before_interrupt));
    const auto out = folder_ / "out.txt";
    const pid_t pid = start_group(
        "run --device cpu --probe sum/f32 --probe cumsum/f32 --repeats 3 --no-cost --journal " + journal.string(), out);
    ASSERT_TRUE(wait_until(
        [&] {
          return journaled_before_interrupt == 0 ? slurp(out).find("journal:") != std::string::npos
                                                 : count_files(journal, "cell-") >= journaled_before_interrupt;
        },
        pid))
        << slurp(out);
    // The worker takes about a second to load libtorch: this lands while it starts.
    if (journaled_before_interrupt == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(-pid, SIGINT);
    EXPECT_EQ(wait_exit(pid), 130) << slurp(out);
    EXPECT_EQ(slurp(out).find("crashed"), std::string::npos) << slurp(out);
    for (const auto& status : journaled_statuses(journal)) EXPECT_EQ(status, "ok");
    const auto resumed = run("run --resume " + journal.string() + " --no-cost --json " + path("r.json"));
    EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
    // Kept in a variable: a range-for over a member of a temporary would walk freed memory.
    const auto resumed_report = json::parse(slurp(folder_ / "r.json"));
    ASSERT_FALSE(resumed_report.at("cells").empty());
    for (const auto& cell : resumed_report.at("cells"))
      EXPECT_EQ(cell.at("verdict"), "deterministic") << cell.at("key");
  }
}

TEST_F(HonestVerdicts, AJournaledInterruptionFromAnEarlierVersionRunsAgain) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run("run " + kSmallAudit + " --no-cost --journal " + journal.string()).exit_code, 0);
  for (const auto& file : fs::directory_iterator(journal)) {
    if (file.path().filename().string().rfind("cell-", 0) != 0) continue;
    auto entry = json::parse(slurp(file.path()));
    entry["observation"] = {{"process", entry.at("process")},
                            {"status", "crashed"},
                            {"runs", json::array()},
                            {"message", "worker ended: signal SIGINT; stderr: "}};
    std::ofstream(file.path()) << entry.dump();
    break;
  }
  const auto resumed = run("run --resume " + journal.string() + " --json " + path("r.json"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("run again: 1 interrupted, not finished"), std::string::npos) << resumed.output;
  EXPECT_EQ(json::parse(slurp(folder_ / "r.json")).at("cells").at(0).at("verdict"), "deterministic");
}

TEST_F(HonestVerdicts, AGateThatComparedNothingFails) {
  const auto report = small_report();
  auto interrupted = json::parse(slurp(report));
  interrupted["complete"] = false;
  const auto interrupted_path = write("interrupted.json", interrupted.dump());
  auto empty = json::parse(slurp(report));
  empty["cells"] = json::array();
  const auto empty_path = write("empty.json", empty.dump());
  const auto empty_baseline = write("empty.yaml", "schema: repro-audit.baseline/1\ncells: {}\n");
  // Another probe's report (shared with other tests): no key in common with the small audit's.
  const auto other = shared_report("cumsum-strict", "--probe cumsum --device cpu --profile strict --no-cost");
  ASSERT_FALSE(other.empty());
  const std::tuple<std::string, int, std::string> cases[] = {
      {"gate --baseline " + report + " --report " + interrupted_path, 2, "interrupted"},
      {"gate --baseline " + report + " --report " + empty_path, 2, "has no cells"},
      {"gate --baseline " + empty_baseline + " --report " + report, 2, "has no cells"},
      {"gate --baseline " + empty_path + " --report " + report, 2, "has no cells"},
      {"compare " + empty_baseline + " " + report, 2, "has no cells"},
      // Every key differs: all MISSING and NEW, which the default policy does not fail on its own.
      {"gate --baseline " + report + " --report " + other, 1, "nothing was compared"},
  };
  for (const auto& [command, code, message] : cases) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, code) << command << "\n" << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << command << "\n" << result.output;
  }
  EXPECT_EQ(run("gate --baseline " + report + " --report " + report).exit_code, 0);  // the control: same audit passes
}

TEST_F(HonestVerdicts, CudaWithoutAGpuAuditsAndGatesNothing) {
  const auto report = small_report();
  const auto cuda = run("run --device cuda --probe sum/f32 --profile default --json " + path("cuda.json"));
  if (json::parse(slurp(folder_ / "cuda.json")).at("environment").at("cuda").value("available", false))
    GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(cuda.exit_code, 1) << cuda.output;
  EXPECT_NE(cuda.output.find("nothing was audited: its only cell was skipped: "), std::string::npos) << cuda.output;
  EXPECT_NE(cuda.output.find("NOTHING AUDITED"), std::string::npos) << cuda.output;
  EXPECT_EQ(cuda.output.find("passed"), std::string::npos) << cuda.output;
  const auto gate = run("gate --baseline " + report + " --device cuda --config " +
                        write("c.yaml", "probes: {sum: [f32]}\nprofiles: [default]\nrepeats: 2\n"));
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("nothing was compared"), std::string::npos) << gate.output;
}

TEST_F(HonestVerdicts, AConfigThatAuditsNothingIsRejectedAtLoad) {
  const std::pair<std::string, std::string> cases[] = {
      {"profiles: []\n", "c.yaml:1:11: profiles is empty"},
      {"probes: []\n", "c.yaml:1:9: probes is empty"},
      {"probes: {}\n", "c.yaml:1:9: probes is empty"},
      {"matrix: {}\n", "c.yaml:1:9: matrix is empty"},
  };
  for (const auto& [text, message] : cases) {
    const auto result = run("run --config " + write("c.yaml", text));
    EXPECT_EQ(result.exit_code, 2) << text << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << text << result.output;
  }
}

}  // namespace
