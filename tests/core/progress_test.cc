// The progress line: cells, runs, elapsed time, an ETA and the failing cells so far; live, once, or never.
#include "audit/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace repro_audit {
namespace {

Cell named(const std::string& key) {
  Cell cell;
  cell.key = key;
  return cell;
}

ProcessObservation ran(std::vector<std::string> digests, ObservationStatus status = ObservationStatus::ok) {
  ProcessObservation observation;
  observation.status = status;
  for (auto& digest : digests) observation.runs.push_back({std::move(digest), {}, false, 1000, "", "", false});
  return observation;
}

TEST(Progress, CountsCellsRunsAndFailingCellsSoFar) {
  std::ostringstream out;
  const std::vector<Cell> cells = {named("a"), named("b"), named("c")};
  Progress progress(out, Progress::Mode::live, cells, {1.0, 1.0, 2.0}, 2);
  EXPECT_NE(progress.line().find("0/3 cells, 0 runs"), std::string::npos) << progress.line();
  EXPECT_NE(progress.line().find("ETA --"), std::string::npos);
  progress.cell_finished(cells[0], ran({"x", "x", "x"}));
  EXPECT_NE(progress.line().find("0/3 cells, 3 runs"), std::string::npos) << progress.line();  // one process of two
  progress.cell_finished(cells[0], ran({"x", "x"}));
  progress.cell_finished(cells[1], ran({"x", "y"}));  // diverged: failing
  progress.cell_finished(cells[1], ran({}, ObservationStatus::crashed));
  const auto line = progress.line();
  EXPECT_NE(line.find("2/3 cells, 7 runs"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA "), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA --"), std::string::npos) << line;
  EXPECT_NE(line.find("1 failing so far"), std::string::npos) << line;
  EXPECT_NE(out.str().find("\r\033[K"), std::string::npos);  // redrawn in place
  progress.cell_finished(cells[2], ran({"z", "z"}));
  progress.cell_finished(cells[2], ran({"z", "z"}));
  EXPECT_NE(progress.line().find("3/3 cells, 11 runs"), std::string::npos) << progress.line();
  EXPECT_NE(progress.line().find("done"), std::string::npos);
  // The later timing rounds: cells of the round timed so far, then done again.
  progress.round_started(2, 3, 2);
  progress.round_started(2, 3, 1);  // the round's next batch
  progress.round_cell_finished();
  EXPECT_NE(progress.line().find("3/3 cells, 11 runs"), std::string::npos) << progress.line();
  EXPECT_NE(progress.line().find("timing round 2/3 (1/3 cells)"), std::string::npos) << progress.line();
  progress.round_started(3, 3, 1);
  EXPECT_NE(progress.line().find("timing round 3/3 (0/1 cells)"), std::string::npos) << progress.line();
  progress.round_cell_finished();
  EXPECT_NE(progress.line().find("done"), std::string::npos) << progress.line();
  progress.finish();
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r\033[K");  // the line is cleared for the matrix
}

TEST(Progress, OneFinalLineOffATerminalAndNothingWhenQuiet) {
  const std::vector<Cell> cells = {named("a")};
  std::ostringstream log;
  Progress once(log, Progress::Mode::final_line, cells, {1.0}, 1);
  once.cell_finished(cells[0], ran({"x", "x"}));
  EXPECT_EQ(log.str(), "");
  once.finish();
  EXPECT_EQ(log.str().find('\r'), std::string::npos);
  EXPECT_NE(log.str().find("1/1 cells, 2 runs"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().back(), '\n');
  std::ostringstream quiet_out;
  Progress quiet(quiet_out, Progress::Mode::quiet, cells, {1.0}, 1);
  quiet.cell_finished(cells[0], ran({"x", "x"}));
  quiet.finish();
  EXPECT_EQ(quiet_out.str(), "");
}

TEST(Progress, ClockText) {
  EXPECT_EQ(clock_text(0), "0:00");
  EXPECT_EQ(clock_text(65.4), "1:05");
  EXPECT_EQ(clock_text(3723), "1:02:03");
}

}  // namespace
}  // namespace repro_audit
