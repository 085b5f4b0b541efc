// Crash blame, time limits, interruptions and resume of the supervisor, on scripted workers.
#include <gtest/gtest.h>

#include "fake_workers.h"
#include "supervisor/supervisor.h"

namespace repro_audit {
namespace {

using namespace std::chrono_literals;
using testing::cell_line;
using testing::FakeLauncher;
using testing::Script;
using testing::start_line;

Cell make_cell(const std::string& key, double timeout_seconds = 60) {
  Cell cell;
  cell.key = key;
  cell.probe = "sum";
  cell.variant = key;
  cell.device = "cpu";
  cell.timeout_seconds = timeout_seconds;
  return cell;
}

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

TEST_F(Supervising, ACellOverItsTimeLimitIsATimeoutAndTheRestRunOn) {
  batch_.cells[1].timeout_seconds = 0.05;
  launcher_.scripts.push_back({{start_line("a"), cell_line("a"), start_line("b")}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("b").at(0).status), "timeout");
  EXPECT_NE(result.observations.at("b").at(0).message.find("time limit of 0.05 s"), std::string::npos);
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
}

TEST_F(Supervising, AWorkerThatNeverStartsTimesOutOnTheFirstCell) {
  options_.startup_allowance = 50ms;
  launcher_.scripts.push_back({{}, 0, true});
  const auto result = run();
  EXPECT_EQ(to_string(result.observations.at("a").at(0).status), "timeout");
  EXPECT_NE(result.observations.at("a").at(0).message.find("did not start in time"), std::string::npos);
  EXPECT_EQ(to_string(result.observations.at("c").at(0).status), "ok");
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

}  // namespace
}  // namespace repro_audit
