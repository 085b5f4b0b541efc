// The machine failing the audit, not a cell: the temporary folder missing at the start or removed
// while a collective audit runs ends the audit with exit 2 naming the folder, never as a cell's
// verdict, and the journal keeps what finished for --resume. Nothing waits for the cell's whole
// time limit on a rendezvous folder that is gone.
#include <sys/stat.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class EnvironmentFailure : public CliTest {};

bool has_file(const fs::path& folder, const std::string& prefix) { return count_files(folder, prefix) > 0; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_F(EnvironmentFailure, ATemporaryFolderMissingAtTheStartIsNamedBeforeAnyCellRuns) {
  const auto missing = path("missing");
  const auto result =
      run("run " + kSmallAudit + " --processes 1 --no-cost", "TMPDIR=" + missing + " XDG_STATE_HOME=" + path("state"));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("the temporary folder " + missing + " (TMPDIR) is missing"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("set TMPDIR to a folder you can write"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(path("state"))) << "no journal was begun";
}

TEST_F(EnvironmentFailure, ATemporaryFolderThatIsAFileAndAJournalPlaceThatCannotBeMadeAreNamedWithTheWayOut) {
  const auto file = write("file", "");
  const auto not_folder = run("run " + kSmallAudit + " --processes 1 --no-cost", "TMPDIR=" + file);
  EXPECT_EQ(not_folder.exit_code, 2) << not_folder.output;
  EXPECT_NE(not_folder.output.find("the temporary folder " + file + " (TMPDIR) is not a folder"), std::string::npos)
      << not_folder.output;
  // /proc takes no folders, whoever asks: the default journal cannot be made under HOME.
  const auto no_state = run("run " + kSmallAudit + " --processes 1 --no-cost", "env -u XDG_STATE_HOME HOME=/proc/1");
  EXPECT_EQ(no_state.exit_code, 2) << no_state.output;
  EXPECT_NE(no_state.output.find("/proc/1/.local/state/repro-audit/journals/"), std::string::npos) << no_state.output;
  EXPECT_NE(no_state.output.find("give --journal DIR, or set XDG_STATE_HOME"), std::string::npos) << no_state.output;
}

// Two collective cells in two processes: once the first cell's first process is journaled, TMPDIR is
// removed. Whichever step needs it next (the second cell's rendezvous, or the second process's) finds
// it gone: exit 2 naming it, no cell blamed, and the finished runs resume once it is back.
TEST_F(EnvironmentFailure, ATemporaryFolderRemovedDuringACollectiveAuditEndsItWithExit2AndKeepsTheJournal) {
  const auto temporary = folder_ / "tmp";
  const auto journal = folder_ / "journal";
  fs::create_directories(temporary);
  const auto config = write("audit.yaml", "timeout: 20\n");
  const auto arguments = "run --config " + config +
                         " --device cpu --probe all_reduce/f32 --profile default --axis threads=1 --axis ranks=2,3 "
                         "--repeats 2 --processes 2 --jobs 1 --no-cost --journal " +
                         journal.string();
  const auto output = folder_ / "out.txt";
  const auto started = std::chrono::steady_clock::now();
  const pid_t audit = start_group(arguments, output, "TMPDIR=" + temporary.string());
  ASSERT_TRUE(wait_until([&] { return has_file(journal, "cell-"); }, audit)) << slurp(output);
  EXPECT_TRUE(remove_while_in_use(temporary));
  const int code = wait_exit(audit);
  const auto text = slurp(output);
  EXPECT_EQ(code, 2) << text;
  EXPECT_LT(seconds_since(started), 10) << "waited for a rendezvous that could not happen";
  EXPECT_NE(text.find("the temporary folder " + temporary.string() + " (TMPDIR) is missing"), std::string::npos)
      << text;
  EXPECT_NE(text.find("--resume " + journal.string()), std::string::npos) << text;
  EXPECT_EQ(text.find("Contradictions"), std::string::npos) << text;
  EXPECT_EQ(text.find("the probe failed"), std::string::npos) << text;
  const int kept = count_files(journal, "cell-");
  EXPECT_GE(kept, 1);
  EXPECT_LE(kept, 3);

  fs::create_directories(temporary);
  const auto report = path("r.json");
  const auto resumed =
      run("run --resume " + journal.string() + " --no-cost --json " + report, "TMPDIR=" + temporary.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed: " + std::to_string(kept) + " of 4 cell runs"), std::string::npos)
      << resumed.output;
  const auto written = json::parse(slurp(report));
  ASSERT_EQ(written.at("cells").size(), 2u);
  for (const auto& cell : written.at("cells")) EXPECT_EQ(cell.at("verdict"), "deterministic") << cell.dump();
}

// The ranks' rendezvous folder removed under them (a cleaner of temporary files) while they meet:
// c10d's FileStore would wait 300 s for its file; the audit ends within half the cell's limit.
TEST_F(EnvironmentFailure, ARendezvousFolderRemovedWhileTheRanksMeetEndsTheAuditWithinHalfTheLimit) {
  const auto temporary = folder_ / "tmp";
  fs::create_directories(temporary);
  const auto config = write("audit.yaml", "timeout: 20\n");
  const auto output = folder_ / "out.txt";
  const auto started = std::chrono::steady_clock::now();
  const pid_t audit = start_group("run --config " + config +
                                      " --device cpu --probe all_reduce/f32 --profile default --axis threads=1 "
                                      "--axis ranks=4 --repeats 2 --processes 1 --no-cost --journal " +
                                      path("journal"),
                                  output, "TMPDIR=" + temporary.string());
  // Three ranks load libtorch before rank 0 opens the store: the folder goes long before that.
  fs::path rendezvous;
  ASSERT_TRUE(wait_until(
      [&] {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(temporary, error))
          if (entry.path().filename().string().rfind("repro-audit-ranks-", 0) == 0) rendezvous = entry.path();
        return !rendezvous.empty();
      },
      audit))
      << slurp(output);
  EXPECT_TRUE(remove_while_in_use(rendezvous));
  const int code = wait_exit(audit);
  const auto text = slurp(output);
  EXPECT_EQ(code, 2) << text;
  EXPECT_LT(seconds_since(started), 10) << text;
  EXPECT_NE(text.find("the ranks' rendezvous folder " + rendezvous.string() + " was removed"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("Contradictions"), std::string::npos) << text;
}

class WorkerFolders : public CliTest {};

// A shared /tmp holds what other users made: folders that share the worker folders' prefix, one named
// like the tool's with a FIFO or a link as its owner mark. Every audit starts without waiting on them
// (a FIFO opened for reading blocks until a writer comes) and leaves them as they were.
TEST_F(WorkerFolders, WhatOthersMadeInTheTemporaryFolderNeitherStopsTheAuditNorIsRemoved) {
  const auto temporary = folder_ / "tmp";
  const std::vector<fs::path> theirs = {
      temporary / "repro-audit-worker-mynotes", temporary / "repro-audit-worker-fifo01",
      temporary / "repro-audit-worker-fifo02", temporary / "repro-audit-worker-nomark"};
  for (const auto& folder : theirs) {
    fs::create_directories(folder);
    std::ofstream(folder / "notes.txt") << "kept";
    fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::hours(1));
  }
  ASSERT_EQ(::mkfifo((theirs[1] / ".owner").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((temporary / "fifo").c_str(), 0600), 0);
  fs::create_symlink(temporary / "fifo", theirs[2] / ".owner");
  const auto started = std::chrono::steady_clock::now();
  const auto result = run("run " + kSmallAudit + " --processes 1 --no-cost",
                          "timeout -s KILL 120 env TMPDIR=" + temporary.string() + " XDG_STATE_HOME=" + path("state"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_LT(seconds_since(started), 60) << result.output;
  for (const auto& folder : theirs) EXPECT_EQ(slurp(folder / "notes.txt"), "kept") << folder;
  EXPECT_EQ(count_files(temporary, ""), static_cast<int>(theirs.size()) + 1);  // theirs and the FIFO only
}

}  // namespace
