#include "verdict/verdict.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "kind/cell_kind.h"

namespace repro_audit {
namespace {

bool mentions_determinism(const std::string& message) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("deterministic") != std::string::npos;
}

// A failure that ends the cell before digests exist, by priority: the worst status wins.
std::optional<Verdict> judge_failure(const Cell& cell, const std::vector<ProcessObservation>& observations) {
  for (const auto status : {ObservationStatus::crashed, ObservationStatus::timeout, ObservationStatus::exception,
                            ObservationStatus::unsupported}) {
    auto it = std::find_if(observations.begin(), observations.end(),
                           [&](const ProcessObservation& o) { return o.status == status; });
    if (it == observations.end()) continue;
    Verdict verdict;
    verdict.message = it->message;
    verdict.processes = static_cast<int>(observations.size());
    verdict.warnings = it->warnings;
    if (status == ObservationStatus::crashed)
      verdict.kind = VerdictKind::crashed;
    else if (status == ObservationStatus::timeout)
      verdict.kind = VerdictKind::timeout;
    else if (status == ObservationStatus::unsupported)
      verdict.kind = VerdictKind::unsupported;
    else {
      const bool all_raised = std::all_of(observations.begin(), observations.end(), [](const ProcessObservation& o) {
        return o.status == ObservationStatus::exception;
      });
      const bool strict = deterministic_mode(cell.settings) == DeterministicMode::on;
      verdict.kind =
          strict && all_raised && mentions_determinism(it->message) ? VerdictKind::raises : VerdictKind::error;
      if (!all_raised) verdict.message = "raised in some processes only: " + it->message;
    }
    return verdict;
  }
  return std::nullopt;
}

// Names the first output of the first run that differs from process 0's run 0.
std::optional<Divergence> divergence_by_digest(const std::vector<ProcessObservation>& observations) {
  const auto* first = first_with_runs(observations);
  if (!first) return std::nullopt;
  const auto& reference = first->runs.front();
  for (const auto& observation : observations)
    for (std::size_t run = 0; run < observation.runs.size(); ++run) {
      const auto& outputs = observation.runs[run].outputs;
      for (std::size_t i = 0; i < outputs.size() && i < reference.outputs.size(); ++i)
        if (outputs[i].second != reference.outputs[i].second)
          return Divergence{outputs[i].first, static_cast<int>(run), -1, 0, 0, 0};
    }
  return std::nullopt;
}

void judge_kernels(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  std::set<std::string> sequences;
  for (const auto& observation : observations)
    for (const auto& run : observation.runs)
      if (!run.kernel_digest.empty()) sequences.insert(run.kernel_digest);
  verdict.kernels_varied = sequences.size() > 1;
  if (sequences.size() == 1) verdict.kernel_digest = *sequences.begin();
}

}  // namespace

double divergence_rate_bound(int runs) {
  if (runs < 2) return 1.0;
  return 1.0 - std::pow(0.05, 1.0 / (runs - 1));
}

std::string sensitivity_text(const Sensitivity& sensitivity) {
  return fmt::format("{:.1f}% of '{}' ({} of {} elements) change bits under {} other accumulation orders (floor {:g}%)",
                     100.0 * sensitivity.fraction(), sensitivity.output, sensitivity.changed, sensitivity.elements,
                     sensitivity.orders, 100.0 * sensitivity.floor);
}

bool is_vacuous(const Verdict& verdict) {
  return verdict.kind == VerdictKind::deterministic && verdict.sensitivity && verdict.sensitivity->insensitive();
}

const ProcessObservation* first_with_runs(const std::vector<ProcessObservation>& observations) {
  const auto found = std::find_if(observations.begin(), observations.end(),
                                  [](const ProcessObservation& observation) { return !observation.runs.empty(); });
  return found == observations.end() ? nullptr : &*found;
}

Verdict judge(const Cell& cell, const std::vector<ProcessObservation>& observations) {
  if (!cell.unsupported_reason.empty()) {
    Verdict verdict;
    verdict.kind = VerdictKind::unsupported;
    verdict.message = cell.unsupported_reason;
    return verdict;
  }
  if (observations.empty()) {
    Verdict verdict;
    verdict.message = "no observations";
    return verdict;
  }
  if (auto failure = judge_failure(cell, observations)) return *failure;

  Verdict verdict;
  verdict.processes = static_cast<int>(observations.size());
  std::set<std::string> digests;
  // The timing-only runs are the timing: untraced, undigested. The determinism runs' times (traced,
  // their digests taken in the timed region) only where no process made any: an audit without costs.
  std::vector<std::int64_t> times, per_op_times, per_op_plain_times, timed;
  std::vector<int> clocks;
  bool within = false;
  for (const auto& observation : observations) {
    std::set<std::string> own;
    bool recorded = false;  // a run of this process digested every op
    for (const auto& run : observation.runs) {
      digests.insert(run.digest);
      own.insert(run.digest);
      if (!run.warmup && !observation.untimed) {
        (run.per_op ? per_op_times : times).push_back(run.time_ns);
        if (recorded && !run.per_op) per_op_plain_times.push_back(run.time_ns);
      }
      recorded = recorded || run.per_op;
      ++verdict.runs;
    }
    timed.insert(timed.end(), observation.timing_ns.begin(), observation.timing_ns.end());
    if (observation.timing_clock_mhz.size() == observation.timing_ns.size())
      clocks.insert(clocks.end(), observation.timing_clock_mhz.begin(), observation.timing_clock_mhz.end());
    else
      clocks.insert(clocks.end(), observation.timing_ns.size(), 0);
    verdict.stopped_early = verdict.stopped_early || observation.stopped_early;
    verdict.budget_limited = verdict.budget_limited || observation.budget_limited;
    within = within || own.size() > 1;
    verdict.warnings.insert(verdict.warnings.end(), observation.warnings.begin(), observation.warnings.end());
  }
  if (!timed.empty())
    verdict.timing = timing_at_one_clock(timed, clocks);
  else
    verdict.timing = timing_of(times.empty() ? per_op_times : times);
  if (!times.empty() || !timed.empty()) verdict.per_op_timing = timing_of(per_op_times);
  if (!per_op_times.empty()) verdict.per_op_plain_timing = timing_of(per_op_plain_times);
  judge_kernels(observations, verdict);
  if (verdict.runs < 2) {
    verdict.kind = VerdictKind::error;
    verdict.message = fmt::format("{} run(s): at least 2 are needed to judge determinism", verdict.runs);
    return verdict;
  }
  verdict.distinct_digests = static_cast<int>(digests.size());
  verdict.digests_agree = digests.size() == 1;
  if (verdict.digests_agree) {
    verdict.kind = VerdictKind::deterministic;
    verdict.digest = *digests.begin();
    verdict.divergence_rate_bound = divergence_rate_bound(verdict.runs);
  } else {
    verdict.kind = VerdictKind::nondeterministic;
    verdict.divergence_scope = within ? "within-process" : "across-processes";
    for (const auto& observation : observations)
      if (observation.divergence) {
        verdict.divergence = observation.divergence;
        break;
      }
    if (!verdict.divergence) verdict.divergence = divergence_by_digest(observations);
  }
  kind_of(cell).judge(cell, observations, verdict);  // the rules the cell's kind adds
  const bool warn_only = deterministic_mode(cell.settings) == DeterministicMode::warn;
  // Only determinism alerts make a cell `warns`; other warnings (deprecations) are kept, not judged.
  const auto alert = std::find_if(verdict.warnings.begin(), verdict.warnings.end(), mentions_determinism);
  if (warn_only && alert != verdict.warnings.end()) {
    verdict.kind = VerdictKind::warns;
    verdict.message = *alert;
  }
  return verdict;
}

bool is_failing(const Verdict& verdict) {
  switch (verdict.kind) {
    case VerdictKind::deterministic:
    case VerdictKind::invariant:
    case VerdictKind::raises:
    case VerdictKind::unsupported:
      return false;
    case VerdictKind::warns:
      return !verdict.digests_agree;
    default:
      return true;
  }
}

bool runs_agreed(VerdictKind kind) {
  return kind == VerdictKind::deterministic || kind == VerdictKind::invariant || kind == VerdictKind::varies;
}

bool runs_diverged(const Verdict& verdict) {
  return verdict.kind == VerdictKind::nondeterministic ||
         (verdict.kind == VerdictKind::warns && !verdict.digests_agree);
}

bool is_skipped(const Verdict& verdict) { return verdict.kind == VerdictKind::unsupported; }

// An op that diverges where PyTorch documents it deterministic is a PyTorch bug: say how to report it.
constexpr const char* kReportUpstream =
    "; a PyTorch bug to report: `repro-audit repro REPORT 'KEY' -o DIR` writes the folder (script, inputs, "
    "README) to attach to an issue at https://github.com/pytorch/pytorch/issues";

bool may_diverge(Documented documented, const FlagSet& settings) {
  const auto mode = deterministic_mode(settings);
  switch (documented) {
    case Documented::nondeterministic:  // the racy controls: documented to diverge, their power is --detect's
      return false;
    case Documented::alternative_under_strict:
      return mode == DeterministicMode::off;
    case Documented::alternative_unless_warn_only:
    case Documented::raises_under_strict:
      return mode != DeterministicMode::on;
    case Documented::cublas_workspace:
      return mode == DeterministicMode::off || !deterministic_prerequisites_met(settings);
    case Documented::deterministic:
    case Documented::unknown:
      return false;
  }
  return false;
}

std::string quiet_runs_text(Documented documented, const FlagSet& settings, const Verdict& verdict) {
  if (verdict.kind != VerdictKind::deterministic && !(verdict.kind == VerdictKind::warns && verdict.digests_agree))
    return "";
  if (!may_diverge(documented, settings)) return "";
  if (verdict.divergence_rate_bound < kQuietRateLevel)
    return fmt::format(
        "documented as possibly diverging, and {} runs agree: a race here shows in fewer than {:.2f}% "
        "of runs (95%)",
        verdict.runs, 100 * verdict.divergence_rate_bound);
  return fmt::format(
      "documented as possibly diverging, and {} runs agree: too few to say a race is rarer than {:.0f}% "
      "of runs (95% bound {:.1f}%); a rare race may have been missed",
      verdict.runs, 100 * kQuietRateLevel, 100 * verdict.divergence_rate_bound);
}

std::optional<Contradiction> find_contradiction(Documented documented, const FlagSet& settings,
                                                const Verdict& verdict) {
  const auto kind = verdict.kind;
  if (kind == VerdictKind::unsupported) return std::nullopt;
  if (kind == VerdictKind::error || kind == VerdictKind::crashed || kind == VerdictKind::timeout)
    return Contradiction{kExpectedVerdict, fmt::format("the probe failed: {} ({})", to_string(kind), verdict.message),
                         true};
  const auto mode = deterministic_mode(settings);
  const bool diverged = !verdict.digests_agree && kind != VerdictKind::raises;
  switch (documented) {
    case Documented::unknown:
      return std::nullopt;
    case Documented::nondeterministic:
      if (kind == VerdictKind::deterministic)
        return Contradiction{"nondeterministic", "documented to diverge, but every run agreed", true};
      return std::nullopt;
    case Documented::deterministic:
      if (diverged)
        return Contradiction{"deterministic",
                             std::string("documented deterministic, but runs diverged") + kReportUpstream, true};
      if (kind == VerdictKind::raises)
        return Contradiction{"deterministic", "documented deterministic, but raised: " + verdict.message, true};
      return std::nullopt;
    case Documented::alternative_unless_warn_only:
      // warn_only runs the default kernel and warns (every time: worker/worker.cc): a cell may diverge or warn.
      if (mode != DeterministicMode::on) return std::nullopt;
      return find_contradiction(Documented::alternative_under_strict, settings, verdict);
    case Documented::alternative_under_strict:
      if (mode == DeterministicMode::off) return std::nullopt;
      if (diverged)
        return Contradiction{
            "deterministic",
            std::string("documented to switch to a deterministic implementation, but runs diverged") + kReportUpstream,
            true};
      if (kind == VerdictKind::raises)
        return Contradiction{"deterministic", "documented to have a deterministic implementation, but raised", true};
      return std::nullopt;
    case Documented::cublas_workspace: {
      const bool configured = deterministic_prerequisites_met(settings);
      return find_contradiction(configured ? Documented::alternative_under_strict : Documented::raises_under_strict,
                                settings, verdict);
    }
    case Documented::raises_under_strict:
      if (mode == DeterministicMode::off) return std::nullopt;
      if (mode == DeterministicMode::on && kind != VerdictKind::raises)
        return Contradiction{"raises",
                             diverged
                                 ? std::string("documented to raise, but ran and diverged silently") + kReportUpstream
                                 : std::string("documented to raise, but ran and every run agreed"),
                             diverged};
      if (mode == DeterministicMode::warn && kind != VerdictKind::warns)
        return Contradiction{
            "warns",
            diverged ? "documented to warn, but diverged without a warning" : "documented to warn, but no warning came",
            diverged};
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace repro_audit
