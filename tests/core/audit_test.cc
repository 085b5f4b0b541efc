// The whole audit on scripted workers: journal, resume, the journal lock, interrupted entries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "audit/audit.h"
#include "common/user_error.h"
#include "fake_workers.h"
#include "protocol/worker_protocol.h"
#include "supervisor/journal.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using testing::FakeLauncher;

class Auditing : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = fs::temp_directory_path() / ("repro-audit-audit-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(journal_);
    config_.device = "cpu";
    config_.probes = {{"sum", {}}, {"index_put_accumulate", {}}};
    config_.profiles = {"default", "strict"};
    config_.axes = {{"threads", {"1"}}};
    config_.repeats = 2;
  }
  void TearDown() override { fs::remove_all(journal_); }

  AuditOptions options(bool resume = false) {
    AuditOptions result;
    result.journal = journal_.string();
    result.resume = resume;
    result.launcher = &launcher_;
    result.resolve_device = [](const std::string&) { return ResolvedDevice{"cpu", ""}; };
    result.environment = [] { return nlohmann::json{{"torch", "test"}}; };
    result.timing.rounds = 1;  // the later timing rounds have tests of their own
    return result;
  }

  // The journal of a finished audit of 4 repeats, in `other`, and an interrupted one of config_ in journal_:
  // entries copied from the first into the second are another config's.
  void journal_of_four_repeats_beside_an_interrupted_one(const std::string& other) {
    fs::remove_all(other);
    auto more_repeats = config_;
    more_repeats.repeats = 4;
    auto first = options();
    first.journal = other;
    ASSERT_TRUE(run_audit(more_repeats, catalogue_, first).report.complete);
    auto interrupted = options();
    interrupted.stop_requested = [] { return true; };
    run_audit(config_, catalogue_, interrupted);
  }

  // Resumes journal_ in fresh workers, its warnings in `warnings`.
  AuditResult resume_collecting(std::vector<std::string>& warnings) {
    FakeLauncher launcher;
    auto resume = options(true);
    resume.launcher = &launcher;
    resume.on_warning = [&](const std::string& warning) { warnings.push_back(warning); };
    return run_audit(config_, catalogue_, resume);
  }

  int journal_entries() {
    int count = 0;
    for (const auto& file : fs::directory_iterator(journal_))
      count += file.path().filename().string().rfind("cell-", 0) == 0;
    return count;
  }

  fs::path journal_;
  Config config_;
  FakeLauncher launcher_;
  Catalogue catalogue_ = testing::test_catalogue();
};

TEST_F(Auditing, AnInterruptedAuditResumesWithoutRunningAFinishedCellAgain) {
  auto first = options();
  int finished = 0;
  first.on_cell = [&](const Cell&, const ProcessObservation&) { ++finished; };
  first.stop_requested = [&] { return finished >= 3; };
  const auto interrupted = run_audit(config_, catalogue_, first);
  EXPECT_FALSE(interrupted.report.complete);
  EXPECT_EQ(journal_entries(), 3);
  EXPECT_EQ(interrupted.total_runs, 12);  // 3 variants x 2 flag sets x 2 processes

  FakeLauncher second_launcher;
  auto second = options(true);
  second.launcher = &second_launcher;
  const auto resumed = run_audit(config_, catalogue_, second);
  EXPECT_TRUE(resumed.report.complete);
  EXPECT_EQ(resumed.resumed_runs, 3);
  int rerun = 0;
  for (const auto& request : second_launcher.requests) rerun += static_cast<int>(request.at("cells").size());
  EXPECT_EQ(rerun, 9);
  EXPECT_EQ(resumed.report.cells.size(), 6u);
  for (const auto& cell : resumed.report.cells) {
    EXPECT_EQ(cell.observations.size(), 2u) << cell.cell.key;
    EXPECT_EQ(to_string(cell.verdict.kind), std::string("deterministic")) << cell.cell.key;
  }
}

TEST_F(Auditing, AJournalThatCannotBeWrittenEndsTheAuditAsTheMachinesFailureAndWhatFinishedResumes) {
  auto first = options();
  const auto moved = journal_.string() + "-moved";
  int finished = 0;
  first.on_cell = [&](const Cell&, const ProcessObservation&) {
    if (++finished == 2) fs::rename(journal_, moved);  // as a full disk would, every later write fails
  };
  try {
    run_audit(config_, catalogue_, first);
    ADD_FAILURE() << "no EnvironmentError";
  } catch (const EnvironmentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("the journal " + journal_.string() + " cannot be written"), std::string::npos) << message;
    EXPECT_NE(message.find("its 2 finished cell run(s) are kept"), std::string::npos) << message;
    EXPECT_NE(message.find("--resume " + journal_.string()), std::string::npos) << message;
  }
  fs::rename(moved, journal_);
  FakeLauncher second_launcher;
  auto second = options(true);
  second.launcher = &second_launcher;
  const auto resumed = run_audit(config_, catalogue_, second);
  EXPECT_TRUE(resumed.report.complete);
  EXPECT_EQ(resumed.resumed_runs, 2);
}

// An audit that a command runs to an end of its own (explain's re-runs, selftest's checks) offers no
// --resume: when the machine fails it, the journal it made goes and the error names no resume; the same
// failure in a resumable audit keeps the journal and says how to finish it.
TEST_F(Auditing, AMachinesFailureInAnAuditNoCommandResumesLeavesNoJournalAndNamesNoResume) {
  for (const bool resumable : {true, false}) {
    SCOPED_TRACE(resumable ? "resumable" : "not resumable");
    fs::remove_all(journal_);
    FakeLauncher launcher;
    launcher.scripts.push_back({{environment_failure_event("the disk is full").dump()}});
    auto audit = options();
    audit.launcher = &launcher;
    audit.resumable = resumable;
    try {
      run_audit(config_, catalogue_, audit);
      ADD_FAILURE() << "no EnvironmentError";
    } catch (const EnvironmentError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("the disk is full"), std::string::npos) << message;
      EXPECT_EQ(message.find("--resume") != std::string::npos, resumable) << message;
    }
    EXPECT_EQ(fs::exists(journal_), resumable);
  }
}

TEST_F(Auditing, AShardRunsItsCellsAndAResumedShardRunsTheSameOnes) {
  auto first = options();
  first.shard = ShardSpec{2, 2, "--shard"};
  for (const auto& cell : make_plan(config_, catalogue_, "cpu").cells) first.timings[cell.key] = 1'000'000;
  first.timings["sum/f32@cpu|threads=1"] = 90'000'000;  // heavy: alone in its shard
  first.timings_source = "earlier.json";
  int finished = 0;
  first.on_cell = [&](const Cell&, const ProcessObservation&) { ++finished; };
  first.stop_requested = [&] { return finished >= 1; };
  const auto interrupted = run_audit(config_, catalogue_, first);
  EXPECT_FALSE(interrupted.report.complete);
  ASSERT_TRUE(interrupted.report.shard);
  EXPECT_EQ(interrupted.report.shard->plan.size(), 6u);
  EXPECT_EQ(interrupted.report.shard->balance, "timings from earlier.json");

  // Resumed without the timings, it still runs the cells the timings gave it.
  FakeLauncher second_launcher;
  auto second = options(true);
  second.launcher = &second_launcher;
  const auto resumed = run_audit(config_, catalogue_, second);
  EXPECT_TRUE(resumed.report.complete);
  ASSERT_TRUE(resumed.report.shard);
  EXPECT_EQ(resumed.report.shard->index, 2);
  EXPECT_EQ(resumed.report.shard->plan, interrupted.report.shard->plan);
  std::set<std::string> keys;
  for (const auto& cell : resumed.report.cells) keys.insert(cell.cell.key);
  EXPECT_EQ(keys.size(), 5u);  // all but the heavy cell, which shard 1 holds alone
  EXPECT_FALSE(keys.count("sum/f32@cpu|threads=1"));
  EXPECT_FALSE(resumed.report.host.empty());
}

TEST_F(Auditing, AJournalHeldByAnotherAuditIsRefused) {
  ASSERT_TRUE(run_audit(config_, catalogue_, options()).report.complete);
  const auto held = Journal::open(journal_.string());
  try {
    run_audit(config_, catalogue_, options(true));
    FAIL() << "resumed a journal another audit holds";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("in use by another running audit"), std::string::npos) << error.what();
  }
}

TEST_F(Auditing, JournalEntriesThatAreNotVerdictsRunAgain) {
  ASSERT_TRUE(run_audit(config_, catalogue_, options()).report.complete);
  std::vector<fs::path> entries;
  for (const auto& file : fs::directory_iterator(journal_))
    if (file.path().filename().string().rfind("cell-", 0) == 0) entries.push_back(file.path());
  ASSERT_GE(entries.size(), 3u);
  std::ifstream in(entries[0]);
  auto interrupted = nlohmann::json::parse(in);
  interrupted["observation"]["status"] = "crashed";
  interrupted["observation"]["message"] = "worker ended: signal SIGINT; stderr: ";
  std::ofstream(entries[0]) << interrupted.dump();
  std::ofstream(entries[1]) << "{\"key\": ";  // torn
  std::ofstream(journal_ / "cell-stray.json") << R"({"key": "nope", "process": 0, "observation": {"status": "ok"}})";

  std::vector<std::string> warnings;
  const auto result = resume_collecting(warnings);
  EXPECT_TRUE(result.report.complete);
  EXPECT_EQ(result.resumed_runs, 10);
  // Said once, with how many and why.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("3 journal entries set aside"), std::string::npos) << warnings[0];
  for (const char* reason :
       {"1 interrupted, not finished", "1 unreadable or malformed", "1 filed under another cell run's name"})
    EXPECT_NE(warnings[0].find(reason), std::string::npos) << warnings[0];
  for (const auto& cell : result.report.cells) EXPECT_NE(to_string(cell.verdict.kind), std::string("crashed"));
}

TEST_F(Auditing, JournalEntriesOfAnotherAuditRunAgainInsteadOfJoiningItsRuns) {
  // Entries of an audit with 4 repeats, copied into the journal of one with 2: before, they joined it.
  const auto other = journal_.string() + "-other";
  journal_of_four_repeats_beside_an_interrupted_one(other);
  if (HasFatalFailure()) return;
  for (const auto& file : fs::directory_iterator(other))
    if (file.path().filename().string().rfind("cell-", 0) == 0)
      fs::copy_file(file.path(), journal_ / file.path().filename(), fs::copy_options::overwrite_existing);
  std::vector<std::string> warnings;
  const auto result = resume_collecting(warnings);
  fs::remove_all(other);
  EXPECT_TRUE(result.report.complete);
  EXPECT_EQ(result.resumed_runs, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("12 journal entries set aside, their cell runs run again: 12 written by an audit of "
                             "another config"),
            std::string::npos)
      << warnings[0];
  for (const auto& cell : result.report.cells)
    for (const auto& observation : cell.observations)
      EXPECT_EQ(observation.runs.size(), 3u) << cell.cell.key;  // a warm-up and 2 repeats
}

// A journal of the first version kept no fingerprint of its audit's config: the runs of an entry say
// whether this config made them.
TEST_F(Auditing, EntriesOfAnotherConfigInAJournalOfTheFirstVersionRunAgain) {
  config_.probes = {{"sum", {}}};  // documented deterministic: it runs the repeats asked for, no more
  const auto other = journal_.string() + "-other";
  journal_of_four_repeats_beside_an_interrupted_one(other);
  if (HasFatalFailure()) return;
  auto header = nlohmann::json::parse(std::ifstream(journal_ / "audit.json"));
  header["schema"] = kJournalSchemaV1;
  std::ofstream(journal_ / "audit.json") << header.dump();
  int copied = 0;
  for (const auto& file : fs::directory_iterator(other)) {
    if (file.path().filename().string().rfind("cell-", 0) != 0) continue;
    auto entry = nlohmann::json::parse(std::ifstream(file.path()));
    entry.erase("version");
    entry.erase("audit");
    std::ofstream(journal_ / file.path().filename()) << entry.dump();
    ++copied;
  }
  fs::remove_all(other);
  ASSERT_EQ(copied, 4);  // sum/f32 x 2 flag sets x 2 processes
  std::vector<std::string> warnings;
  const auto result = resume_collecting(warnings);
  EXPECT_TRUE(result.report.complete);
  EXPECT_EQ(result.resumed_runs, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("4 journal entries set aside, their cell runs run again: 4 recorded with 4 runs after "
                             "the warm-up where this audit's config makes 2"),
            std::string::npos)
      << warnings[0];
  for (const auto& cell : result.report.cells)
    for (const auto& observation : cell.observations) EXPECT_EQ(observation.runs.size(), 3u) << cell.cell.key;
}

TEST_F(Auditing, AnAuditWhoseDeviceIsUnavailableSkipsEveryCellAndStartsNoWorker) {
  auto unavailable = options();
  unavailable.resolve_device = [](const std::string&) { return ResolvedDevice{"cuda:0", "no CUDA device"}; };
  const auto result = run_audit(config_, catalogue_, unavailable);
  EXPECT_TRUE(launcher_.requests.empty());
  EXPECT_EQ(nothing_audited_reason(result.report), "every one of the 6 cells was skipped: no CUDA device");
  EXPECT_EQ(result.report.environment.at("torch"), "test");
}

TEST_F(Auditing, LaterTimingRoundsAddSamplesToTheFirstProcessAndTheJournal) {
  auto audit = options();
  audit.timing.rounds = 3;
  std::vector<int> rounds;
  int timed = 0;
  audit.on_round = [&](int round, int total, const std::vector<Cell>& cells) {
    rounds.push_back(round);
    EXPECT_EQ(total, 3);
    EXPECT_EQ(cells.size(), 6u);
  };
  audit.on_timing_round = [&](const Cell&, const ProcessObservation&) { ++timed; };
  const auto result = run_audit(config_, catalogue_, audit);
  ASSERT_TRUE(result.report.complete);
  EXPECT_EQ(rounds, (std::vector<int>{2, 3}));
  EXPECT_EQ(timed, 12);
  // One determinism worker per process, then one per round, told its round.
  ASSERT_EQ(launcher_.requests.size(), 4u);
  EXPECT_EQ(launcher_.requests[2].at("timing_round"), 2);
  EXPECT_EQ(launcher_.requests[3].at("timing_round"), 3);
  for (const auto& cell : result.report.cells) {
    ASSERT_EQ(cell.observations.size(), 2u) << cell.cell.key;
    const auto& first = cell.observations[0];
    EXPECT_EQ(first.timing_rounds, 3) << cell.cell.key;
    EXPECT_EQ(first.timing_ns, (std::vector<std::int64_t>{900, 1100, 900, 1100})) << cell.cell.key;
    EXPECT_EQ(cell.observations[1].timing_rounds, 1) << cell.cell.key;
    // The rounds' 4 untraced samples alone: the determinism runs (traced, digested) are no timing.
    EXPECT_EQ(cell.verdict.timing.samples, 4) << cell.cell.key;
    EXPECT_EQ(cell.verdict.timing.median_ns, 1000) << cell.cell.key;
    EXPECT_EQ(to_string(cell.verdict.kind), std::string("deterministic")) << cell.cell.key;
  }
  // The journal kept each first process with its rounds (an entry replaced, not added).
  EXPECT_EQ(journal_entries(), 12);
  const auto entries = Journal::open(journal_.string()).entries().entries;
  for (const auto& entry : entries)
    EXPECT_EQ(entry.observation.timing_rounds, entry.observation.process == 0 ? 3 : 1) << entry.key;
}

TEST_F(Auditing, AnAuditInterruptedInATimingRoundResumesOnlyTheRoundsItLacks) {
  auto first = options();
  first.timing.rounds = 3;
  int timed = 0;
  first.on_timing_round = [&](const Cell&, const ProcessObservation&) { ++timed; };
  first.stop_requested = [&] { return timed >= 8; };  // 6 cells of round 2, 2 of round 3
  const auto interrupted = run_audit(config_, catalogue_, first);
  EXPECT_FALSE(interrupted.report.complete);

  FakeLauncher launcher;
  auto second = options(true);
  second.timing.rounds = 3;
  second.launcher = &launcher;
  const auto resumed = run_audit(config_, catalogue_, second);
  ASSERT_TRUE(resumed.report.complete);
  // No determinism runs again: one worker, round 3, for the 4 cells without it.
  ASSERT_EQ(launcher.requests.size(), 1u);
  EXPECT_EQ(launcher.requests[0].at("timing_round"), 3);
  EXPECT_EQ(launcher.requests[0].at("cells").size(), 4u);
  for (const auto& cell : resumed.report.cells) {
    EXPECT_EQ(cell.observations[0].timing_rounds, 3) << cell.cell.key;
    EXPECT_EQ(cell.observations[0].timing_ns.size(), 4u) << cell.cell.key;
  }
}

TEST_F(Auditing, ACrashInATimingRoundKeepsTheVerdictAndSaysSo) {
  auto audit = options();
  audit.timing.rounds = 2;
  launcher_.crash_in_round = {"sum/f32@cpu|threads=1"};
  const auto result = run_audit(config_, catalogue_, audit);
  ASSERT_TRUE(result.report.complete);
  ASSERT_GE(launcher_.requests.size(), 3u);  // the round's worker died; a fresh one times any cell left
  EXPECT_EQ(launcher_.requests.back().at("timing_round"), 2);
  int warned = 0;
  for (const auto& cell : result.report.cells) {
    EXPECT_EQ(to_string(cell.verdict.kind), std::string("deterministic")) << cell.cell.key;
    const auto& first = cell.observations.at(0);
    EXPECT_EQ(first.timing_rounds, 2) << cell.cell.key;
    if (cell.cell.key != "sum/f32@cpu|threads=1") {
      EXPECT_EQ(first.timing_ns.size(), 2u) << cell.cell.key;
      continue;
    }
    ++warned;
    EXPECT_TRUE(first.timing_ns.empty());
    ASSERT_EQ(cell.verdict.warnings.size(), 1u);
    EXPECT_NE(cell.verdict.warnings[0].find("timing round 2 ended: crashed: worker ended: signal SIGSEGV"),
              std::string::npos)
        << cell.verdict.warnings[0];
  }
  EXPECT_EQ(warned, 1);
}

}  // namespace
}  // namespace repro_audit
