// Crash blame, time limits, interruptions and resume of the supervisor, on scripted workers.
#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "common/user_error.h"
#include "fake_workers.h"
#include "protocol/observation_json.h"
#include "protocol/worker_protocol.h"
#include "supervisor/supervisor.h"

namespace repro_audit {
namespace {

using namespace std::chrono_literals;
using testing::cell_line;
using testing::FakeLauncher;
using testing::make_cell;
using testing::Script;
using testing::start_line;

class Supervising : public ::testing::Test {
 protected:
  Supervising() {
    batch_.cells = {make_cell("a"), make_cell("b"), make_cell("c")};
    options_.launcher = &launcher_;
    options_.processes = 1;
    options_.terminate_grace = 1ms;
  }
  SupervisedRuns run() { return run_batches({batch_}, options_); }
  Batch batch_;
  FakeLauncher launcher_;
  SupervisorOptions options_;
};

TEST_F(Supervising, ACrashBlamesTheCellInFlightAndAFreshWorkerFinishesTheRest) {
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b")}, SIGSEGV});
  const auto result = run();
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "ok");
  const auto& crashed = result.observations.at("b").at(0);
  EXPECT_EQ(to_string(crashed.status), "crashed");
  EXPECT_NE(crashed.message.find("signal SIGSEGV"), std::string::npos) << crashed.message;
  EXPECT_NE(crashed.message.find("fake log"), std::string::npos) << crashed.message;
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
  ASSERT_EQ(launcher_.requests.size(), 2u);
  EXPECT_EQ(launcher_.requested_keys(1), std::vector<std::string>{"c"});
}

TEST_F(Supervising, AWorkerThatExitsBeforeAnyCellBlamesTheFirstAsAnException) {
  launcher_.scripts.push_back({{}, 0});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "exception");
  EXPECT_NE(result.observations.at("a").at(0).message.find("worker ended: exit 1"), std::string::npos);
  EXPECT_EQ(to_string(result.observations.at("b").at(0).status), "ok");
  EXPECT_EQ(launcher_.requested_keys(1), (std::vector<std::string>{"b", "c"}));
}

// A record the supervisor cannot read (here a negative time) fails its own cell, saying so; the
// worker's later cells still count, and no other cell is blamed when the worker ends.
TEST_F(Supervising, ACellWhoseRecordCannotBeReadFailsItselfAndNothingElse) {
  auto unreadable = nlohmann::json::parse(cell_line("b"));
  unreadable["observation"]["runs"][0]["time_ns"] = -5;
  launcher_.scripts.push_back(
      {{start_line("a"), cell_line("a"), start_line("b"), unreadable.dump(), start_line("c"), cell_line("c")}, 0});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "ok");
  const auto& failed = result.observations.at("b").at(0);
  EXPECT_EQ(to_string(failed.status), "exception");
  EXPECT_NE(failed.message.find("the worker's record of the cell could not be read"), std::string::npos)
      << failed.message;
  EXPECT_NE(failed.message.find("time_ns"), std::string::npos) << failed.message;
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
  EXPECT_EQ(launcher_.requests.size(), 1u);
}

TEST_F(Supervising, ACellOverItsTimeLimitIsATimeoutAndTheRestRunOn) {
  batch_.cells[1].timeout_seconds = 0.05;
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b")}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("b").at(0).status), "timeout");
  EXPECT_NE(result.observations.at("b").at(0).message.find("time limit of 0.05 s"), std::string::npos);
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
}

TEST_F(Supervising, AWorkerThatNeverStartsIsReplacedWithoutBlamingACell) {
  options_.startup_allowance = 50ms;
  launcher_.scripts.push_back({{}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "ok");
  EXPECT_EQ(launcher_.requested_keys(1), (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(Supervising, ThreeWorkersInARowThatNeverStartFailTheFirstCellSayingItDidNotRun) {
  options_.startup_allowance = 50ms;
  for (int i = 0; i < 3; ++i) launcher_.scripts.push_back({{}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "timeout");
  EXPECT_NE(result.observations.at("a").at(0).message.find("did not run: 3 workers in a row did not start in time"),
            std::string::npos);
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
}

TEST_F(Supervising, AWorkerStoppedBeforeItsFirstCellIsReplacedWithoutWaitingForItsStartLimit) {
  options_.startup_allowance = std::chrono::seconds(60);
  launcher_.scripts.push_back({{}, 0, true, true});
  const auto begun = std::chrono::steady_clock::now();
  const auto result = run();
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(10));
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "ok");
}

TEST_F(Supervising, AWorkerThatRanACellThenFallsSilentBlamesTheNextCellAsBefore) {
  options_.startup_allowance = 50ms;
  launcher_.scripts.push_back({{start_line("a"), cell_line("a")}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "ok");
  EXPECT_EQ(to_string(result.observations.at("b").at(0).status), "timeout");
  EXPECT_NE(result.observations.at("b").at(0).message.find("did not start in time"), std::string::npos);
}

// A worker that reported every cell but whose output does not end (a process it started holds the
// pipe, or its exit is held up): stopped after a short while, no cell blamed, fresh or resumed.
TEST_F(Supervising, AWorkerThatReportedEveryCellThenFallsSilentIsStoppedBlamingNothing) {
  for (const bool resumed : {false, true}) {
    FakeLauncher launcher;
    options_.launcher = &launcher;
    options_.startup_allowance = 50ms;
    options_.finished =
        resumed ? std::set<std::pair<std::string, int>>{{"a", 0}, {"b", 0}} : std::set<std::pair<std::string, int>>{};
    Script script{{}, 0, true};
    for (const std::string key : {"a", "b", "c"})
      if (!resumed || key == "c") script.lines.insert(script.lines.end(), {start_line(key), cell_line(key)});
    launcher.scripts.push_back(script);
    const auto result = run();
    EXPECT_FALSE(result.interrupted);
    EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
    EXPECT_EQ(result.observations.size(), resumed ? 1u : 3u);
    EXPECT_EQ(launcher.requests.size(), 1u) << "a worker was started for no cell";
  }
}

TEST_F(Supervising, FinishedCellRunsAreNotRunAgain) {
  options_.processes = 2;
  options_.finished = {{"a", 0}, {"b", 1}};
  const auto result = run();
  EXPECT_EQ(launcher_.requested_keys(0), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(launcher_.requested_keys(1), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(result.observations.at("c").size(), 2u);
  EXPECT_EQ(result.observations.at("a").size(), 1u);
  EXPECT_EQ(result.observations.at("a").at(0).process, 1);
}

TEST_F(Supervising, AWorkerInterruptedBySigintOrSighupLeavesItsCellWithoutAVerdict) {
  for (const int signal : {SIGINT, SIGHUP}) {
    FakeLauncher launcher;
    options_.launcher = &launcher;
    launcher.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b")}, signal});
    const auto result = run();
    EXPECT_TRUE(result.interrupted);
    EXPECT_EQ(result.observations.count("b"), 0u) << "an interrupted cell became a verdict";
    EXPECT_EQ(result.observations.count("c"), 0u);
    EXPECT_EQ(launcher.requests.size(), 1u) << "a worker started after the interruption";
  }
}

TEST_F(Supervising, AWorkerSayingTheMachineFailedItEndsTheRunWithoutBlamingACell) {
  launcher_.scripts.push_back(
      {{start_line("a"), cell_line("a"), start_line("b"), environment_failure_event("the disk is full").dump()},
       0,
       true});
  std::vector<std::string> finished;
  options_.on_cell = [&](const Cell& cell, const ProcessObservation&) { finished.push_back(cell.key); };
  EXPECT_THROW(run(), EnvironmentError);
  EXPECT_EQ(finished, std::vector<std::string>{"a"}) << "b is no cell's verdict, and c never started";
  EXPECT_EQ(launcher_.requests.size(), 1u);
}

TEST_F(Supervising, AWorkerThatCannotStartForTheMachineEndsTheRun) {
  struct NoProcesses : FakeLauncher {
    std::unique_ptr<Worker> start(const std::string&, const std::map<std::string, std::string>&) override {
      throw EnvironmentError("cannot start /gone/repro-audit: No such file or directory");
    }
  } launcher;
  options_.launcher = &launcher;
  EXPECT_THROW(run(), EnvironmentError);
}

TEST_F(Supervising, AStopRequestEndsTheWorkerWithoutBlamingItsCell) {
  bool stop = false;
  options_.stop_requested = [&] { return stop; };
  options_.on_cell = [&](const Cell&, const ProcessObservation&) { stop = true; };
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b")}, 0, true});
  const auto result = run();
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(result.observations.size(), 1u);
  EXPECT_EQ(launcher_.requests.size(), 1u);
}

Cell threaded_cell(const std::string& key, const std::string& threads) {
  auto cell = make_cell(key);
  cell.settings = {{"threads", threads}};
  return cell;
}

TEST(ParallelGroups, SplitTheLaterProcessesByThreadsAndCores) {
  Batch batch;
  batch.cells = {threaded_cell("a1", "1"), threaded_cell("b2", "2"), threaded_cell("c1", "1"),
                 threaded_cell("d1", "1"), threaded_cell("e2", "2"), make_cell("f")};
  const auto groups = parallel_groups({batch}, 3, 0, 2);
  ASSERT_EQ(groups.size(), 4u);  // processes 1 and 2, each: one thread, two threads (and the unset: every core)
  EXPECT_EQ(groups[0].process, 1);
  EXPECT_EQ(groups[2].process, 2);
  ASSERT_EQ(groups[0].parts.size(), 2u);  // 2 cores / 1 thread
  EXPECT_EQ(groups[0].parts[0].cells.size(), 2u);
  EXPECT_EQ(groups[0].parts[1].cells.size(), 1u);
  ASSERT_EQ(groups[1].parts.size(), 1u);  // 2 cores / 2 threads; "f" uses every core
  EXPECT_EQ(groups[1].parts[0].cells.size(), 3u);
  // An explicit --jobs holds whatever the threads, but never more workers than cells.
  const auto forced = parallel_groups({batch}, 2, 8, 2);
  ASSERT_EQ(forced.size(), 2u);
  EXPECT_EQ(forced[0].parts.size(), 3u);
  EXPECT_EQ(forced[1].parts.size(), 3u);
  EXPECT_TRUE(parallel_groups({batch}, 1, 0, 2).empty());  // one process: nothing beside it
  EXPECT_EQ(cell_threads(threaded_cell("z", "0"), 8), 1);
  EXPECT_EQ(cell_threads(make_cell("z"), 8), 8);
}

class SupervisingSideBySide : public ::testing::Test {
 protected:
  SupervisingSideBySide() {
    batch_.cells = {threaded_cell("a", "1"), threaded_cell("b", "1"), threaded_cell("c", "1"), threaded_cell("d", "2")};
    options_.launcher = &launcher_;
    options_.processes = 2;
    options_.jobs = 0;
    options_.cores = 2;
    options_.terminate_grace = 1ms;
  }
  Batch batch_;
  FakeLauncher launcher_;
  SupervisorOptions options_;
};

TEST_F(SupervisingSideBySide, TheFirstProcessRunsAloneAndTimesTheLaterOnesAddUntimedDigests) {
  std::vector<std::pair<std::string, int>> finished;
  options_.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    finished.emplace_back(cell.key, observation.process);
  };
  const auto result = run_batches({batch_}, options_);
  EXPECT_FALSE(result.interrupted);
  // Process 0 alone (one worker, every cell); process 1: two workers for the one-thread cells, one for d.
  ASSERT_EQ(launcher_.requests.size(), 4u);
  EXPECT_EQ(launcher_.requested_keys(0), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(launcher_.requests[0].at("process"), 0);
  EXPECT_EQ(launcher_.requested_keys(3), std::vector<std::string>{"d"});
  for (const auto& key : {"a", "b", "c", "d"}) {
    const auto& seen = result.observations.at(key);
    ASSERT_EQ(seen.size(), 2u) << key;
    EXPECT_EQ(seen[0].process, 0);
    EXPECT_FALSE(seen[0].untimed) << key;
    EXPECT_EQ(seen[1].process, 1);
    EXPECT_EQ(seen[1].untimed, std::string(key) != "d") << key;  // d ran alone: its times are timings
  }
  ASSERT_EQ(finished.size(), 8u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(finished[i].second, 0);  // every first process first
}

TEST_F(SupervisingSideBySide, ACrashBesideAnotherWorkerBlamesItsOwnCell) {
  launcher_.crash_on = {"b"};
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b"), cell_line("b"), start_line("c"),
                                cell_line("c"), start_line("d"), cell_line("d")}});
  const auto result = run_batches({batch_}, options_);
  EXPECT_FALSE(result.interrupted);
  EXPECT_EQ(to_string(result.observations.at("b").at(1).status), "crashed");
  for (const auto& key : {"a", "c", "d"}) EXPECT_EQ(to_string(result.observations.at(key).at(1).status), "ok");
}

TEST_F(SupervisingSideBySide, AStopEndsEveryWorkerAndNoFurtherGroupStarts) {
  std::atomic<bool> stop = false;
  options_.stop_requested = [&] { return stop.load(); };
  options_.on_cell = [&](const Cell&, const ProcessObservation& observation) {
    if (observation.process == 1) stop = true;
  };
  const auto result = run_batches({batch_}, options_);
  EXPECT_TRUE(result.interrupted);
  // Every first process; then the worker of a and c stops after its first later cell at most, and the
  // one of b may or may not finish b before it sees the stop.
  EXPECT_EQ(result.observations.at("c").size(), 1u);
  const auto later = result.observations.at("a").size() + result.observations.at("b").size() - 2;
  EXPECT_GE(later, 1u);
  EXPECT_LE(later, 2u);
  EXPECT_EQ(result.observations.at("d").size(), 1u) << "the two-thread group started after the stop";
}

TEST_F(SupervisingSideBySide, AMachineFailureBesideAnotherWorkerStopsTheOthersAndIsThrownOnce) {
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b"), cell_line("b"), start_line("c"),
                                cell_line("c"), start_line("d"), cell_line("d")}});
  launcher_.scripts.push_back(
      {{environment_failure_event("the temporary folder /gone (TMPDIR) is missing: No such file or directory")
            .dump()}});
  std::set<std::string> later;
  options_.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    if (observation.process == 1) later.insert(cell.key);
  };
  try {
    run_batches({batch_}, options_);
    ADD_FAILURE() << "no EnvironmentError";
  } catch (const EnvironmentError& error) {
    EXPECT_NE(std::string(error.what()).find("/gone (TMPDIR) is missing"), std::string::npos) << error.what();
  }
  EXPECT_LE(later.size(), 2u);
  EXPECT_FALSE(later.count("d")) << "the two-thread group started after the failure";
}

TEST_F(Supervising, TimingRoundsRunInFreshWorkersAfterEveryDeterminismRun) {
  options_.processes = 2;
  options_.timing.rounds = 3;
  auto observations = run_batches({batch_}, options_).observations;
  ASSERT_EQ(launcher_.requests.size(), 2u);
  std::vector<std::string> timed;
  options_.on_timing_round = [&](const Cell& cell, const ProcessObservation& observation) {
    timed.push_back(cell.key);
    EXPECT_EQ(observation.process, 0);
  };
  ASSERT_TRUE(run_timing_rounds({batch_}, options_, observations));
  ASSERT_EQ(launcher_.requests.size(), 4u);
  EXPECT_EQ(launcher_.requests[2].at("timing_round"), 2);
  EXPECT_EQ(launcher_.requests[2].at("process"), 0);
  EXPECT_EQ(launcher_.requested_keys(2), (std::vector<std::string>{"c", "b", "a"}));
  EXPECT_EQ(launcher_.requested_keys(3), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(launcher_.requests[3].at("timing").at("rounds"), 3);
  EXPECT_EQ(timed, (std::vector<std::string>{"c", "b", "a", "a", "b", "c"}));
  for (const auto& key : {"a", "b", "c"}) {
    ASSERT_EQ(observations.at(key).size(), 2u);  // still two processes
    EXPECT_EQ(observations.at(key)[0].timing_ns.size(), 4u);
    EXPECT_EQ(observations.at(key)[0].timing_rounds, 3);
    EXPECT_TRUE(observations.at(key)[1].timing_ns.empty());
  }
  // Every round done: nothing more to time.
  ASSERT_TRUE(run_timing_rounds({batch_}, options_, observations));
  EXPECT_EQ(launcher_.requests.size(), 4u);
}

}  // namespace
}  // namespace repro_audit
