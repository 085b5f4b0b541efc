// Nothing lost: outputs are checked before the audit, an output that fails after it loses neither
// the journal nor the other outputs, no command overwrites its own input, one journal = one audit.
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;

class DataLoss : public CliTest {};

TEST_F(DataLoss, AnOutputThatCannotBeWrittenStopsTheAuditBeforeItStarts) {
  fs::create_directories(folder_ / "a-folder");
  write("a-file", "x");
  // A device is written through (see output_files_test.cc); a loop of links can take no content.
  fs::create_symlink(path("loop-b"), path("loop-a"));
  fs::create_symlink(path("loop-a"), path("loop-b"));
  const std::pair<std::string, std::string> cases[] = {
      {"--json /nonexistent/dir/r.json", "/nonexistent/dir/r.json"},
      {"--json " + path("a-folder"), "is a folder"},
      {"--html " + path("a-file") + "/r.html", "is not a folder"},
      {"--markdown /proc/r.md", "/proc/r.md"},
      {"--save-baseline /nonexistent/b.yaml", "/nonexistent/b.yaml"},
      {"--junit " + path("loop-a"), "too many levels of links"},
  };
  for (const auto& [option, message] : cases) {
    const auto journal = folder_ / "journal";
    const auto result = run("run " + kSmallAudit + " --no-cost --journal " + journal.string() + " " + option);
    EXPECT_EQ(result.exit_code, 2) << option << "\n" << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << option << "\n" << result.output;
    EXPECT_FALSE(fs::exists(journal)) << option << ": the audit started";
  }
}

TEST_F(DataLoss, NoCommandOverwritesItsOwnInput) {
  const auto report = path("r.json");
  ASSERT_EQ(run("run " + kSmallAudit + " --no-cost --json " + report).exit_code, 0);
  const auto before = slurp(report);
  fs::create_symlink(report, folder_ / "link.json");
  const std::string commands[] = {
      "baseline " + report + " -o " + report,
      "baseline " + report + " -o " + path("link.json"),
      "compare " + report + " " + report + " --json " + report,
      "compare " + report + " " + report + " --html " + folder_.string() + "/../" + folder_.filename().string() +
          "/r.json",
      "gate --baseline " + report + " --report " + report + " --markdown " + report,
      "run " + kSmallAudit + " --no-cost --json " + path("x.json") + " --html " + path("x.json"),
  };
  for (const auto& command : commands) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_EQ(slurp(report), before) << command;
  }
  EXPECT_FALSE(fs::exists(folder_ / "x.json"));
}

TEST_F(DataLoss, AnOutputFailingAfterTheAuditKeepsTheJournalTheMatrixAndTheOtherOutputs) {
  fs::create_directories(folder_ / "gone");
  const auto state = folder_ / "state";
  const auto out = folder_ / "out.txt";
  // Two batches of two processes: the output folder disappears while the audit runs.
  const pid_t pid = start_group(
      "run --device cpu --probe sum/f32 --profile default --axis threads=1,2 --repeats 2 "
      "--json " +
          path("gone/r.json") + " --html " + path("r.html"),
      out, "XDG_STATE_HOME=" + state.string());
  const auto journals = state / "repro-audit" / "journals";
  ASSERT_TRUE(wait_until(
      [&] {
        std::error_code error;
        for (const auto& journal : fs::directory_iterator(journals, error))
          if (count_files(journal.path(), "cell-") > 0) return true;
        return false;
      },
      pid))
      << slurp(out);
  EXPECT_TRUE(remove_while_in_use(folder_ / "gone"));
  EXPECT_EQ(wait_exit(pid), 2) << slurp(out);
  const auto output = slurp(out);
  EXPECT_NE(output.find("sum/f32"), std::string::npos) << "the matrix was not printed\n" << output;
  EXPECT_NE(output.find("gone/r.json"), std::string::npos) << output;
  EXPECT_NE(output.find("write the outputs again with: "), std::string::npos) << output;
  EXPECT_TRUE(fs::exists(folder_ / "r.html"));
  // The journal is still there, and finishing from it writes the report without running a cell again.
  std::string journal;
  for (const auto& entry : fs::directory_iterator(journals)) journal = entry.path().string();
  ASSERT_FALSE(journal.empty()) << "the journal was deleted";
  const auto resumed = run("run --resume " + journal + " --json " + path("r2.json"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed: 4 of 4 cell runs"), std::string::npos) << resumed.output;
  EXPECT_TRUE(nlohmann::json::parse(slurp(folder_ / "r2.json")).at("complete").get<bool>());
}

TEST_F(DataLoss, OneJournalServesOneAuditAtATime) {
  const auto journal = folder_ / "journal";
  const auto out = folder_ / "first.txt";
  const pid_t pid =
      start_group("run --device cpu --probe sum/f32 --probe cumsum/f32 --repeats 3 --journal " + journal.string(), out);
  ASSERT_TRUE(wait_until([&] { return count_files(journal, "cell-") > 0; }, pid)) << slurp(out);
  const auto second = run("run " + kSmallAudit + " --no-cost --journal " + journal.string());
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_NE(second.output.find("in use by another running audit"), std::string::npos) << second.output;
  const auto resumed = run("run --resume " + journal.string());
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_NE(resumed.output.find("in use by another running audit"), std::string::npos) << resumed.output;
  kill(-pid, SIGKILL);
  wait_exit(pid);
  // The lock dies with its holder: the killed audit's journal can be resumed now.
  const auto finished = run("run --resume " + journal.string() + " --no-cost");
  EXPECT_EQ(finished.exit_code, 0) << finished.output;
}

}  // namespace
