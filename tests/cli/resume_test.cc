// Kill the supervisor mid-audit, resume from the journal, and check nothing is lost or repeated.
#include <nlohmann/json.hpp>
#include <set>

#include "cli_tools.h"

namespace {

using namespace testing_cli;

// Three variants under the default matrix's six flag sets, in two processes: 18 cells, 36 cell runs, of
// which the interruptions below leave about a third journaled.
const std::string kAudit =
    "--device cpu --probe sum/f32 --probe cumsum/f32 --probe index_add/f32 --repeats 3 --no-cost";

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
        output.find("resumed: " + std::to_string(journaled_before) + " of 36 cell runs were already in the journal"),
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
    // 3 variants x 6 flag sets.
    EXPECT_EQ(keys.size(), 18u);
    EXPECT_EQ(journaled_runs(journal), 36);  // every (cell, process) journaled exactly once
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
  ASSERT_LT(before, 36);
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
  ASSERT_EQ(run_to_end("run --device cpu --probe sum/f32 --profile default --axis threads=1 --repeats 2 --no-cost "
                       "--journal " +
                           journal.string(),
                       folder_ / "first.txt"),
            0);
  EXPECT_EQ(run_to_end("run --device cpu --probe sum/f32 --journal " + journal.string(), folder_ / "second.txt"), 2);
  EXPECT_NE(slurp(folder_ / "second.txt").find("already holds a journal"), std::string::npos);
  EXPECT_EQ(run_to_end("run --resume " + folder_.string(), folder_ / "third.txt"), 2);  // no journal there
}

// A small audit whose journal is kept: one cell, two processes.
const std::string kOneCell = "run --device cpu --probe sum/f32 --profile default --axis threads=1 --no-cost";

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(std::ifstream(path)); }

std::vector<fs::path> entries(const fs::path& journal) {
  std::vector<fs::path> files;
  for (const auto& file : fs::directory_iterator(journal))
    if (file.path().filename().string().rfind("cell-", 0) == 0) files.push_back(file.path());
  return files;
}

// Timed runs of each process of the report's only cell.
std::vector<int> timed_runs(const fs::path& report) {
  std::vector<int> counts;
  const auto read = read_json(report);
  for (const auto& observation : read.at("cells").at(0).at("observations")) {
    int timed = 0;
    for (const auto& run : observation.at("runs")) timed += !run.value("warmup", false);
    counts.push_back(timed);
  }
  return counts;
}

TEST_F(Resume, AnEntryWithoutItsAuditsFingerprintRunsAgainInsteadOfJoiningAnotherConfigsAudit) {
  const auto ten = folder_ / "ten", one = folder_ / "one";
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 10 --journal " + ten.string(), folder_ / "ten.txt"), 0);
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 1 --journal " + one.string(), folder_ / "one.txt"), 0);
  // The 10-repeat audit's entries, their fingerprint removed, in place of the 1-repeat audit's own.
  for (const auto& file : entries(ten)) {
    auto entry = read_json(file);
    entry.erase("audit");
    std::ofstream(one / file.filename()) << entry.dump();
  }
  const auto report = folder_ / "report.json";
  EXPECT_EQ(run_to_end("run --resume " + one.string() + " --json " + report.string(), folder_ / "resume.txt"), 0);
  const auto output = slurp(folder_ / "resume.txt");
  EXPECT_NE(output.find("2 journal entries set aside, their cell runs run again: 2 without their audit's "
                        "fingerprint"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("resumed:"), std::string::npos) << output;
  EXPECT_EQ(timed_runs(report), (std::vector<int>{1, 1})) << output;
}

// A journal of the first version kept no fingerprint of its audit's config: an entry whose runs another
// config made (4 repeats in an audit of 1), or of a cell outside the plan, is not merged, whatever the header.
TEST_F(Resume, AFirstVersionJournalMergesNoEntryWhoseRunsAnotherConfigMade) {
  const auto four = folder_ / "four", f64 = folder_ / "f64", one = folder_ / "one";
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 4 --journal " + four.string(), folder_ / "four.txt"), 0);
  ASSERT_EQ(run_to_end("run --device cpu --probe sum/f64 --profile default --axis threads=1 --no-cost --repeats 1 "
                       "--journal " +
                           f64.string(),
                       folder_ / "f64.txt"),
            0);
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 1 --journal " + one.string(), folder_ / "one.txt"), 0);
  auto header = read_json(one / "audit.json");
  header["schema"] = "repro-audit.journal/1";
  std::ofstream(one / "audit.json") << header.dump();
  for (const auto& journal : {four, f64})
    for (const auto& file : entries(journal)) {
      auto entry = read_json(file);
      entry.erase("version");  // as the first version wrote them
      entry.erase("audit");
      std::ofstream(one / file.filename()) << entry.dump();
    }
  const auto report = folder_ / "report.json";
  EXPECT_EQ(run_to_end("run --resume " + one.string() + " --json " + report.string(), folder_ / "resume.txt"), 0);
  const auto output = slurp(folder_ / "resume.txt");
  EXPECT_NE(output.find("4 journal entries set aside, their cell runs run again: 2 for cells not in this audit's "
                        "plan; 2 recorded with 4 runs after the warm-up where this audit's config makes 1"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("resumed:"), std::string::npos) << output;
  EXPECT_EQ(timed_runs(report), (std::vector<int>{1, 1})) << output;
}

TEST_F(Resume, TwoEntriesForOneCellRunThatDisagreeAreNeitherUsed) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 3 --journal " + journal.string(), folder_ / "first.txt"), 0);
  // A copy of the first process's entry under another name, whose last run gave other bits.
  fs::path first;
  for (const auto& file : entries(journal))
    if (read_json(file).at("process") == 0) first = file;
  auto crafted = read_json(first);
  crafted["observation"]["runs"].back()["digest"] = std::string(32, '0');
  std::ofstream(journal / "cell-0.json") << crafted.dump();
  const auto report = folder_ / "report.json";
  EXPECT_EQ(run_to_end("run --resume " + journal.string() + " --json " + report.string(), folder_ / "resume.txt"), 0);
  const auto output = slurp(folder_ / "resume.txt");
  EXPECT_NE(output.find("2 journal entries set aside, their cell runs run again: 2 disagreeing with another entry "
                        "for the same cell run"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("resumed: 1 of 2 cell runs"), std::string::npos) << output;
  EXPECT_EQ(read_json(report).at("cells").at(0).at("verdict"), "deterministic") << output;
}

// A journal's strings are data: a key with escape codes reaches no terminal.
TEST_F(Resume, AnEntrysEscapeCodesAreNotPrinted) {
  const auto journal = folder_ / "journal";
  ASSERT_EQ(run_to_end(kOneCell + " --repeats 2 --journal " + journal.string(), folder_ / "first.txt"), 0);
  auto entry = read_json(entries(journal).front());
  entry["key"] = "\033[2J\033]0;owned\007";
  std::ofstream(journal / "cell-escape.json") << entry.dump();
  EXPECT_EQ(run_to_end("run --resume " + journal.string(), folder_ / "resume.txt"), 0);
  const auto output = slurp(folder_ / "resume.txt");
  EXPECT_NE(output.find("1 journal entry set aside"), std::string::npos) << output;
  EXPECT_EQ(output.find('\033'), std::string::npos) << output;
}

// Journals written by earlier versions (tests/core/fixtures: never edit them) resume without a cell
// running again.
TEST_F(Resume, AJournalOfAnEarlierVersionResumes) {
  for (const std::string name : {"journal-v1-fingerprinted", "journal-v1-unfingerprinted"}) {
    const auto journal = folder_ / name;
    fs::copy(fs::path(test_paths::kFixtureDir) / name, journal, fs::copy_options::recursive);
    const auto output_file = folder_ / (name + ".txt");
    EXPECT_EQ(run_to_end("run --resume " + journal.string(), output_file), 0) << slurp(output_file);
    const auto output = slurp(output_file);
    EXPECT_NE(output.find("resumed: 4 of 4 cell runs"), std::string::npos) << output;
    EXPECT_EQ(output.find("set aside"), std::string::npos) << output;
  }
}

}  // namespace
