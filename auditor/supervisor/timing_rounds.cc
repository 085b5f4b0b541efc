// The later timing rounds' choice of cells, and what a round adds to a cell's first observation.
#include <fmt/format.h>

#include <algorithm>

#include "kind/cell_kind.h"
#include "supervisor/supervisor.h"
#include "timing/timing.h"
#include "verdict/verdict.h"

namespace repro_audit {

void add_timing_round(ProcessObservation& first, const ProcessObservation& round_observation, int round) {
  first.timing_rounds = std::max(first.timing_rounds, round);
  if (round_observation.status != ObservationStatus::ok) {
    // The determinism runs stand; the round's samples are lost, and the report says why.
    first.warnings.push_back(fmt::format("timing round {} ended: {}: {}", round, to_string(round_observation.status),
                                         round_observation.message));
    return;
  }
  // Clocks stay parallel to the samples: a round that read none (or the first, when this one did) pads with 0.
  const bool clocks = !first.timing_clock_mhz.empty() || !round_observation.timing_clock_mhz.empty();
  if (clocks) {
    first.timing_clock_mhz.resize(first.timing_ns.size(), 0);
    auto round_clocks = round_observation.timing_clock_mhz;
    round_clocks.resize(round_observation.timing_ns.size(), 0);
    first.timing_clock_mhz.insert(first.timing_clock_mhz.end(), round_clocks.begin(), round_clocks.end());
  }
  first.timing_ns.insert(first.timing_ns.end(), round_observation.timing_ns.begin(), round_observation.timing_ns.end());
  if (!first.input_digest.empty() && !round_observation.input_digest.empty() &&
      first.input_digest != round_observation.input_digest)
    first.warnings.push_back(fmt::format("timing round {} drew other inputs (digest {}, not {})", round,
                                         round_observation.input_digest, first.input_digest));
}

std::vector<Batch> timing_round_batches(const std::vector<Batch>& batches, const Observations& observations,
                                        const TimingRule& rule, int round) {
  std::vector<Batch> result;
  for (const auto& batch : batches) {
    Batch taking{batch.process_settings, {}};
    for (const auto& cell : batch.cells) {
      if (!kind_of(cell).has_timing_runs()) continue;  // its runs are its timings (a model's)
      const auto* first = first_process(observations, cell.key);
      if (!first || first->status != ObservationStatus::ok || first->untimed || first->runs.empty() ||
          first->timing_rounds >= round)
        continue;
      // Decided once, on the first round's samples: a cell that took round 2 takes every round, though a
      // loaded machine slowed its round-2 samples past the limit (its report then says 3 rounds, not 2).
      if (first->timing_rounds == 1) {
        std::vector<std::int64_t> samples = first->timing_ns;
        for (const auto& run : first->runs)
          if (!run.warmup && !run.per_op) samples.push_back(run.time_ns);
        if (samples.empty() || static_cast<double>(timing_of(samples).median_ns) / 1e9 > rule.round_limit_seconds())
          continue;
      }
      taking.cells.push_back(cell);
    }
    if (!taking.cells.empty()) result.push_back(std::move(taking));
  }
  if (round % 2 == 0) {  // even rounds walk the audit backwards: a cell's rounds lie far apart
    std::reverse(result.begin(), result.end());
    for (auto& batch : result) std::reverse(batch.cells.begin(), batch.cells.end());
  }
  return result;
}

}  // namespace repro_audit
