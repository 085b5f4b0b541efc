#include "timing/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace repro_audit {

double Timing::relative_half_width() const {
  if (!has_interval() || median_ns <= 0) return 1.0;
  return (static_cast<double>(ci_high_ns) - static_cast<double>(ci_low_ns)) / 2.0 / static_cast<double>(median_ns);
}

std::optional<std::pair<std::size_t, std::size_t>> median_interval_ranks(std::size_t samples, double confidence) {
  if (samples < 6) return std::nullopt;
  const double n = static_cast<double>(samples);
  const double alpha = 1.0 - confidence;
  // P(B <= k) for B ~ Bin(n, 1/2), summed in log space so n of many thousands does not underflow.
  double cumulative = 0;
  std::size_t low = 0;  // 0-based: the interval [x_(low), x_(n-1-low)] misses it with 2 P(B <= low)
  for (std::size_t k = 0; k < samples / 2; ++k) {
    const double kd = static_cast<double>(k);
    cumulative += std::exp(std::lgamma(n + 1) - std::lgamma(kd + 1) - std::lgamma(n - kd + 1) - n * std::log(2.0));
    if (2 * cumulative > alpha) break;
    low = k;  // from 6 samples on, k = 0 ([min, max], missing with 2^(1-n) <= 3.1%) always qualifies
  }
  return std::make_pair(low, samples - 1 - low);
}

Timing timing_of(const std::vector<std::int64_t>& samples_ns, double target) {
  Timing timing;
  if (samples_ns.empty()) return timing;
  auto sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  auto rank = [&](double q) {
    const auto index = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(index, 1, sorted.size()) - 1];
  };
  timing.median_ns =
      sorted.size() % 2 ? sorted[sorted.size() / 2] : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  timing.p10_ns = rank(0.10);
  timing.p90_ns = rank(0.90);
  timing.samples = static_cast<int>(sorted.size());
  if (const auto ranks = median_interval_ranks(sorted.size())) {
    timing.ci_low_ns = sorted[ranks->first];
    timing.ci_high_ns = std::max<std::int64_t>(sorted[ranks->second], 1);
    timing.target_reached = timing.relative_half_width() <= target;
  }
  return timing;
}

Timing timing_at_one_clock(const std::vector<std::int64_t>& samples_ns, const std::vector<int>& clocks_mhz,
                           double target) {
  if (clocks_mhz.size() != samples_ns.size()) return timing_of(samples_ns, target);
  std::map<int, int> count;
  for (const int clock : clocks_mhz)
    if (clock > 0) ++count[clock];
  if (count.empty()) return timing_of(samples_ns, target);
  // The most common clock; of two as common, the higher (a GPU's boost clock, where it settles).
  const auto modal = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
                       return a.second < b.second || (a.second == b.second && a.first < b.first);
                     })->first;
  std::vector<std::int64_t> kept;
  for (std::size_t i = 0; i < samples_ns.size(); ++i)
    if (clocks_mhz[i] == modal || clocks_mhz[i] == 0) kept.push_back(samples_ns[i]);
  auto timing = timing_of(kept, target);
  timing.clock_mhz = modal;
  timing.samples_at_other_clocks = static_cast<int>(samples_ns.size() - kept.size());
  return timing;
}

bool timing_done(const std::vector<std::int64_t>& samples_ns, const TimingRule& rule, double spent_seconds) {
  const auto n = static_cast<int>(samples_ns.size());
  if (n >= rule.max_samples) return true;
  if (n < rule.min_samples) return false;
  if (spent_seconds >= rule.budget_seconds) return true;
  return timing_of(samples_ns, rule.target).target_reached;
}

TimeInterval interval_of(const Timing& timing) {
  if (timing.has_interval()) return {static_cast<double>(timing.ci_low_ns), static_cast<double>(timing.ci_high_ns)};
  return {static_cast<double>(timing.p10_ns), static_cast<double>(timing.p90_ns)};
}

std::optional<CostRatio> cost_ratio(const Timing& timing, const Timing& reference) {
  if (timing.samples <= 0 || reference.samples <= 0 || timing.median_ns <= 0 || reference.median_ns <= 0)
    return std::nullopt;
  if (timing.clock_mhz > 0 && reference.clock_mhz > 0 && timing.clock_mhz != reference.clock_mhz) return std::nullopt;
  const auto cell = interval_of(timing), base = interval_of(reference);
  CostRatio ratio;
  ratio.value = static_cast<double>(timing.median_ns) / static_cast<double>(reference.median_ns);
  ratio.low = base.high > 0 ? cell.low / base.high : 0;
  ratio.high = base.low > 0 ? cell.high / base.low : HUGE_VAL;
  return ratio;
}

std::string cost_text(const CostRatio& ratio) {
  if (!ratio.measurable()) return "~1.0x";
  return fmt::format("{:.1f}x", ratio.value);
}

std::string cost_detail(const CostRatio& ratio) {
  if (!ratio.measurable())
    return fmt::format("~1.0x ({:.2f}x, 95% interval {:.2f}-{:.2f}x: no measurable cost)", ratio.value, ratio.low,
                       ratio.high);
  return fmt::format("{:.2f}x (95% interval {:.2f}-{:.2f}x)", ratio.value, ratio.low, ratio.high);
}

}  // namespace repro_audit
