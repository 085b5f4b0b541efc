#pragma once
// Timing statistics: a cell's median with its 95% confidence interval, the rule that decides when a
// cell has been timed enough, and cost ratios with their intervals. Distribution-free throughout: the
// median's interval comes from order statistics (a binomial argument), never from a normal model.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

struct Timing {
  std::int64_t median_ns = 0;
  std::int64_t p10_ns = 0;
  std::int64_t p90_ns = 0;
  int samples = 0;
  // The median's 95% confidence interval; both 0 when not known (fewer than 6 samples, or a report
  // or baseline of a version that did not keep one).
  std::int64_t ci_low_ns = 0;
  std::int64_t ci_high_ns = 0;
  bool target_reached = false;  // the interval's relative half-width met the timing target
  // On a GPU: the SM clock (MHz, read from NVML after each sample) every sample above was taken at,
  // and how many samples were left out because the GPU ran at another clock then. 0: not known (the
  // CPU, or a GPU NVML could not read).
  int clock_mhz = 0;
  int samples_at_other_clocks = 0;
  bool has_interval() const { return ci_high_ns > 0; }
  // Half the interval's width over the median; 1 when there is no interval.
  double relative_half_width() const;
};

// The 0-based ranks [low, high] in the sorted samples of the median's interval with at least
// `confidence` coverage: the largest l with 2 P(Bin(n, 1/2) < l) <= 1 - confidence, and n - 1 - l.
// None below 6 samples: even [min, max] covers the median with less than 95% then.
std::optional<std::pair<std::size_t, std::size_t>> median_interval_ranks(std::size_t samples, double confidence = 0.95);

// Median, p10, p90 (nearest rank) and the median's 95% interval; `target_reached` against `target`.
Timing timing_of(const std::vector<std::int64_t>& samples_ns, double target = 0.01);

// The same of the samples taken at the clock most of them were taken at: `clocks_mhz` holds each
// sample's SM clock (0: not known), parallel to `samples_ns`, or is empty. A sample taken at another
// clock times another machine and is not mixed in; `samples_at_other_clocks` counts them.
Timing timing_at_one_clock(const std::vector<std::int64_t>& samples_ns, const std::vector<int>& clocks_mhz,
                           double target = 0.01);

// When a cell has been timed enough (as nvbench decides): at least `min_samples`, then until the
// median's interval is within `target` of it (relative half-width), or `budget_seconds` of timing are
// spent, or `max_samples` are taken.
//
// The budget is shared by `rounds` timing rounds spread over the audit: the first right after the
// cell's determinism runs, the others in passes over every timed cell once all determinism runs are
// done, each in a fresh worker. A host's speed drifts over seconds and differs from process to
// process; timings from one stretch of one process make two audits of one machine disagree.
struct TimingRule {
  int min_samples = 10;
  double target = 0.01;
  double budget_seconds = 0.03;  // per cell: the default suite has hundreds of cells
  int max_samples = 2000;
  int rounds = 3;
  // A later round takes at least this many samples, past its budget if need be: with the determinism
  // runs' 20 samples, 2 rounds of 3 can reach the p10 and p90 a gate compares, 2 of 1 could not.
  int round_min_samples = 3;
  double round_budget() const { return budget_seconds / (rounds > 1 ? rounds : 1); }
  // A cell whose one run takes longer than this (the median of its first round) is timed in the first
  // round only: a later round would cost it a warm-up and the minimum samples, far past the round's
  // budget. Decided once: a cell that took round 2 takes every round.
  double round_limit_seconds() const { return 2 * round_budget(); }
};
bool timing_done(const std::vector<std::int64_t>& samples_ns, const TimingRule& rule, double spent_seconds);

// The interval a comparison trusts: the median's 95% interval, or p10..p90 where none was kept.
struct TimeInterval {
  double low = 0;
  double high = 0;
};
TimeInterval interval_of(const Timing& timing);

// A cell's median over a reference's (strict over default), with a conservative 95% interval: the
// quotient of the two medians' intervals, [low / reference high, high / reference low]. None when
// either has no samples, or when both were timed on a GPU at different SM clocks: the quotient
// would measure the clock, not the switch.
// A ratio whose interval reaches within this of 1 is no cost, however tightly it was timed: two fresh
// GPU workers running the same kernels differ by tenths of a percent (an H200 timed a control without
// a cost at 1.0013x, 95% interval 1.0012-1.0013x), which says nothing about the switch.
constexpr double kNegligibleCost = 0.01;

struct CostRatio {
  double value = 1;
  double low = 1;
  double high = 1;
  // The interval lies wholly beyond 1% of 1: a cost (or a saving) the timer can tell from noise.
  bool measurable() const { return low > 1.0 + kNegligibleCost || high < 1.0 - kNegligibleCost; }
  bool operator==(const CostRatio&) const = default;
};
std::optional<CostRatio> cost_ratio(const Timing& timing, const Timing& reference);

// "1.3x", or "~1.0x" when the interval reaches within 1% of 1 (no measurable cost).
std::string cost_text(const CostRatio& ratio);
// "1.30x (95% interval 1.26-1.34x)", or "~1.0x (1.03x, 95% interval 0.97-1.09x: no measurable cost)".
std::string cost_detail(const CostRatio& ratio);

}  // namespace repro_audit
