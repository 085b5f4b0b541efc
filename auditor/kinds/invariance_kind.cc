#include "kinds/invariance_kind.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/portability.h"
#include "report/report.h"
#include "report/text_format.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

// An invariance cell whose runs agree: every perturbed output against the reference (output 0).
void judge_perturbations(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  const auto* first = first_with_runs(observations);
  if (!first) return;
  const auto& outputs = first->runs.front().outputs;
  if (outputs.size() < 2) {
    verdict.kind = VerdictKind::error;
    verdict.message = "an invariance probe returned no perturbed result to compare with its reference";
    return;
  }
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    if (outputs[i].second == outputs.front().second) continue;
    Divergence variation{outputs[i].first, 0, -1, 0, 0, 0};
    for (const auto& measured : first->variations)
      if (measured.output == outputs[i].first) variation = measured;
    verdict.variations.push_back(variation);
  }
  if (verdict.variations.empty()) {
    verdict.kind = VerdictKind::invariant;
    verdict.message = fmt::format("all {} perturbed results equal the reference bit for bit", outputs.size() - 1);
  } else {
    verdict.kind = VerdictKind::varies;
    const auto worst = std::max_element(
        verdict.variations.begin(), verdict.variations.end(),
        [](const Divergence& a, const Divergence& b) { return a.max_ulp_difference < b.max_ulp_difference; });
    verdict.message = fmt::format("{} of {} perturbed results differ from the reference; first {}",
                                  verdict.variations.size(), outputs.size() - 1, verdict.variations.front().output);
    if (worst->differing_elements >= 0)
      verdict.message += fmt::format(", max ULP difference {:g} ({})", worst->max_ulp_difference, worst->output);
  }
}

// An invariance probe's level beside the ladder: held when every member's perturbations did. A
// member that varies adds where to the limit.
void judge_level(const std::vector<const CellReport*>& members, Portability& result) {
  const auto invariance = members.front()->cell.invariance;
  for (const auto* member : members) {
    const auto& verdict = member->verdict;
    if (verdict.kind == VerdictKind::invariant) continue;
    if (verdict.kind == VerdictKind::varies) {
      const auto& label = member->cell.label.empty() ? member->cell.key : member->cell.label;
      const auto where = verdict.variations.empty() ? std::string("a perturbation") : verdict.variations.front().output;
      const auto text = fmt::format("varies with {} under {}", where, label);
      result.limit = result.limit.empty() ? text : result.limit + "; " + text;
    }
    return;
  }
  result.invariance = invariance_level(invariance);
}

// Repeats an invariance cell runs per process at most. Its answer is run 0's: each perturbed result
// against the reference, computed side by side in one run. The later runs only check that the runs
// agree (8 runs over 2 processes catch a divergence shown by a third of runs 94% of the time; the
// repeat probes of matmul, conv, sum and embedding_bag take every repeat asked for). A run computes
// its op at up to 28 batch sizes: with 10 repeats the suite under the default profiles takes half an
// hour on a 2-core host.
constexpr int kInvarianceRepeats = 3;

class InvarianceKind : public ProbeCellKind {
 public:
  const char* name() const override { return "invariance"; }
  bool claims(const Cell& cell) const override { return cell.invariance != Invariance::none; }
  // Every run is kept: the perturbations are measured against the reference of each.
  bool stops_at_first_difference() const override { return false; }
  // Its few runs are its timings: timing-only runs up to the minimum samples would cost more than its
  // runs, and its cost is the repeat probes' to measure.
  bool has_timing_runs() const override { return false; }
  int repeats(int requested) const override { return std::min(requested, kInvarianceRepeats); }
  void judge(const Cell&, const std::vector<ProcessObservation>& observations, Verdict& verdict) const override {
    if (verdict.kind == VerdictKind::deterministic) judge_perturbations(observations, verdict);
  }
  std::vector<std::string> detail_lines(const Verdict& verdict) const override {
    std::vector<std::string> lines;
    for (const auto& variation : verdict.variations) lines.push_back("varies: " + variation_text(variation));
    return lines;
  }
  void judge_portability(const std::vector<const CellReport*>& members, Portability& result) const override {
    judge_level(members, result);
  }
};

}  // namespace

const CellKind& invariance_kind() {
  static const InvarianceKind kind;
  return kind;
}

}  // namespace repro_audit
