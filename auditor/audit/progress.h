#pragma once
// The audit's progress for a person: on a terminal, one line redrawn as cells finish (cells done of
// all, runs, elapsed time, an ETA from the cells' expected costs refined by what they really took, and
// the cells failing so far); elsewhere (CI logs) one final line; with --quiet, nothing.
#include <chrono>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "verdict/observation.h"

namespace repro_audit {

class Progress {
 public:
  enum class Mode { live, final_line, quiet };
  // `expected_seconds`: each cell's expected cost (plan/shard.h), in plan order; `processes` per cell.
  Progress(std::ostream& out, Mode mode, const std::vector<Cell>& cells, std::vector<double> expected_seconds,
           int processes);

  // A cell finished in one process (or was read from the journal).
  void cell_finished(const Cell& cell, const ProcessObservation& observation);
  // A later timing round starts on a batch of `cells` cells; each then ends in round_cell_finished.
  void round_started(int round, int rounds, std::size_t cells);
  void round_cell_finished();
  // Clears the live line, or prints the final one.
  void finish();

  // "12/40 cells, 240 runs, 0:31 elapsed, ETA 1:10, 2 failing so far", then in a later timing round
  // "40/40 cells, 900 runs, 0:52 elapsed, timing round 2/3 (12/38 cells), 2 failing so far"
  std::string line() const;

 private:
  std::ostream& out_;
  Mode mode_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::string> keys_;
  std::vector<double> expected_;
  int processes_;
  double expected_total_ = 0;
  double expected_done_ = 0;
  long long runs_ = 0;
  std::set<std::string> cells_done_, failing_;
  std::vector<int> processes_done_;
  int round_ = 0, rounds_ = 0;
  std::size_t round_cells_ = 0, round_done_ = 0;
};

// "1:05", "0:07", "1:02:03".
std::string clock_text(double seconds);

}  // namespace repro_audit
