#include "audit/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace repro_audit {

std::string clock_text(double seconds) {
  const auto total = static_cast<long long>(std::max(0.0, std::round(seconds)));
  if (total >= 3600) return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
  return fmt::format("{}:{:02}", total / 60, total % 60);
}

Progress::Progress(std::ostream& out, Mode mode, const std::vector<Cell>& cells, std::vector<double> expected_seconds,
                   int processes)
    : out_(out),
      mode_(mode),
      started_(std::chrono::steady_clock::now()),
      expected_(std::move(expected_seconds)),
      processes_(std::max(1, processes)),
      processes_done_(cells.size(), 0) {
  for (const auto& cell : cells) keys_.push_back(cell.key);
  expected_.resize(keys_.size(), 0.0);
  for (const auto cost : expected_) expected_total_ += cost;
}

void Progress::cell_finished(const Cell& cell, const ProcessObservation& observation) {
  const auto it = std::find(keys_.begin(), keys_.end(), cell.key);
  if (it == keys_.end()) return;
  const auto index = static_cast<std::size_t>(it - keys_.begin());
  runs_ += static_cast<long long>(observation.runs.size() + observation.timing_ns.size());
  expected_done_ += expected_[index] / processes_;
  if (++processes_done_[index] >= processes_) cells_done_.insert(cell.key);
  // Failing so far: what one process already shows (a divergence, an ending); cross-process
  // divergence shows only when the verdicts are judged.
  bool failed = observation.status == ObservationStatus::crashed || observation.status == ObservationStatus::timeout ||
                observation.status == ObservationStatus::exception;
  for (const auto& run : observation.runs) failed = failed || run.digest != observation.runs.front().digest;
  if (failed) failing_.insert(cell.key);
  if (mode_ == Mode::live) out_ << "\r\033[K" << line() << std::flush;
}

void Progress::round_started(int round, int rounds, std::size_t cells) {
  if (round != round_) round_cells_ = round_done_ = 0;
  round_ = round;
  rounds_ = rounds;
  round_cells_ += cells;
  if (mode_ == Mode::live) out_ << "\r\033[K" << line() << std::flush;
}

void Progress::round_cell_finished() {
  ++round_done_;
  if (mode_ == Mode::live) out_ << "\r\033[K" << line() << std::flush;
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::string eta = "ETA --";
  // Expected costs are declared weights: scaled by what the finished cells really took.
  if (expected_done_ > 0 && expected_total_ > 0)
    eta = "ETA " + clock_text(elapsed * (expected_total_ - expected_done_) / expected_done_);
  if (cells_done_.size() == keys_.size()) eta = "done";
  if (round_ > 0 && round_done_ < round_cells_)
    eta = fmt::format("timing round {}/{} ({}/{} cells)", round_, rounds_, round_done_, round_cells_);
  return fmt::format("{}/{} cells, {} runs, {} elapsed, {}, {} failing so far", cells_done_.size(), keys_.size(), runs_,
                     clock_text(elapsed), eta, failing_.size());
}

void Progress::finish() {
  if (mode_ == Mode::live)
    out_ << "\r\033[K" << std::flush;
  else if (mode_ == Mode::final_line)
    out_ << line() << "\n" << std::flush;
}

}  // namespace repro_audit
