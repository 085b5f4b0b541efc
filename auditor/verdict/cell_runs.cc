#include "verdict/cell_runs.h"

#include <fmt/format.h>

#include <algorithm>

#include "kind/cell_kind.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

// Documented as possibly diverging, with runs that stop at the first difference: it runs on while they agree.
bool runs_on_while_quiet(const Cell& cell, const Catalogue& catalogue) {
  const auto& kind = kind_of(cell);
  return kind.stops_at_first_difference() &&
         may_diverge(kind.documented(cell, find_probe(catalogue, cell.probe)), cell.settings);
}

}  // namespace

int quiet_runs_per_process(int processes) { return processes > 0 ? (kQuietRuns + processes - 1) / processes : 0; }

int cell_repeats(const Cell& cell, const Catalogue& catalogue, int requested, int quiet_runs) {
  const int own = kind_of(cell).repeats(requested);
  return cell.budget_seconds <= 0 && runs_on_while_quiet(cell, catalogue) ? std::max(own, quiet_runs) : own;
}

std::string runs_problem(const Cell& cell, const Catalogue& catalogue, const ProcessObservation& observation,
                         int repeats, int warmup, int processes) {
  const auto& runs = observation.runs;
  const auto first_timed =
      std::find_if(runs.begin(), runs.end(), [](const RunObservation& run) { return !run.warmup; });
  const auto leading = static_cast<int>(first_timed - runs.begin());
  const auto warmups =
      static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const RunObservation& run) { return run.warmup; }));
  const auto total = static_cast<int>(runs.size());
  // A process's runs may stop during its warm-up (the second run's bits differ from the first's).
  if (warmups != leading || leading != std::min(warmup, total))
    return fmt::format("recorded with {} warm-up run(s) where this audit's config makes {}", warmups, warmup);
  const auto& kind = kind_of(cell);
  const int after = total - leading, fewest = kind.repeats(repeats);
  const int most_repeats =
      runs_on_while_quiet(cell, catalogue) ? std::max(fewest, quiet_runs_per_process(processes)) : fewest;
  const int most = most_repeats + kind.extra_runs(cell, most_repeats);
  if (after > most)
    return fmt::format("recorded with {} runs after the warm-up where this audit's config makes {}{}", after,
                       most == fewest ? "" : "at most ", most);
  const bool whole =
      observation.status == ObservationStatus::ok && !observation.stopped_early && !observation.budget_limited;
  if (whole && after < fewest)
    return fmt::format("recorded with {} runs after the warm-up where this audit's config makes {}{}", after,
                       most == fewest ? "" : "at least ", fewest);
  return "";
}

}  // namespace repro_audit
