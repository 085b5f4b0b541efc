// Kill the supervisor mid-audit, resume from the journal, and check nothing is lost or repeated.
#include <nlohmann/json.hpp>
#include <set>

#include "cli_tools.h"

namespace {

using namespace testing_cli;

const std::string kAudit = "--device cpu --probe sum --probe cumsum --probe index_add/f32 --repeats 3 --no-cost";

int journaled_runs(const fs::path& journal) { return count_files(journal, "cell-"); }

pid_t start(const std::string& arguments, const fs::path& output) { return start_group(arguments, output); }

bool wait_for_runs(const fs::path& journal, int runs, pid_t pid) {
  return wait_until([&] { return journaled_runs(journal) >= runs; }, pid);
}

int run_to_end(const std::string& arguments, const fs::path& output) { return wait_exit(start(arguments, output)); }

class Resume : public CliTest {
 protected:
  // Resumes the journal and checks the final report holds every cell exactly once.
  void resume_and_check(const fs::path& journal, int journaled_before) {
    const auto report_path = folder_ / "report.json";
    const int code =
        run_to_end("run --resume " + journal.string() + " --json " + report_path.string(), folder_ / "resume.txt");
    const auto output = slurp(folder_ / "resume.txt");
    EXPECT_EQ(code, 0) << output;
    // Exactly the runs journaled before the interruption were taken from the journal, none run again.
    EXPECT_NE(
        output.find("resumed: " + std::to_string(journaled_before) + " of 72 cell runs were already in the journal"),
        std::string::npos)
        << output;
    std::ifstream in(report_path);
    const auto report = nlohmann::json::parse(in);
    EXPECT_TRUE(report.at("complete").get<bool>());
    std::set<std::string> keys;
    for (const auto& cell : report.at("cells")) {
      EXPECT_TRUE(keys.insert(cell.at("key").get<std::string>()).second) << "twice: " << cell.at("key");
      EXPECT_EQ(cell.at("observations").size(), 2u) << cell.at("key");
      EXPECT_NE(cell.at("verdict"), "crashed") << cell.at("key");
    }
    // 6 variants (sum x3, cumsum x2, index_add/f32) x 6 flag sets.
    EXPECT_EQ(keys.size(), 36u);
    EXPECT_EQ(journaled_runs(journal), 72);  // every (cell, process) journaled exactly once
  }
};

TEST_F(Resume, AfterTheSupervisorIsKilledWithSigkill) {
  const auto journal = folder_ / "journal";
  const pid_t pid = start("run " + kAudit + " --journal " + journal.string(), folder_ / "first.txt");
  ASSERT_TRUE(wait_for_runs(journal, 10, pid)) << slurp(folder_ / "first.txt");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const int before = journaled_runs(journal);
  ASSERT_LT(before, 72);
  resume_and_check(journal, before);
}

TEST_F(Resume, AfterCtrlCTheFinishedCellsAreKeptAndTheWayBackIsPrinted) {
  const auto journal = folder_ / "journal";
  const pid_t pid = start("run " + kAudit + " --journal " + journal.string(), folder_ / "first.txt");
  ASSERT_TRUE(wait_for_runs(journal, 10, pid)) << slurp(folder_ / "first.txt");
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto output = slurp(folder_ / "first.txt");
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("resume with: "), std::string::npos) << output;
  resume_and_check(journal, journaled_runs(journal));
}

TEST_F(Resume, AJournalFolderIsNotReusedByANewAudit) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run_to_end("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --journal " +
                           journal.string(),
                       folder_ / "first.txt"),
            0);
  EXPECT_EQ(run_to_end("run --device cpu --probe sum/f32 --journal " + journal.string(), folder_ / "second.txt"), 2);
  EXPECT_NE(slurp(folder_ / "second.txt").find("already holds a journal"), std::string::npos);
  EXPECT_EQ(run_to_end("run --resume " + folder_.string(), folder_ / "third.txt"), 2);  // no journal there
}

}  // namespace
