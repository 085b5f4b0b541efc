#include "kinds/collective_kind.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "hash/digest.h"
#include "kinds/repeat_kind.h"
#include "plan/ranks.h"
#include "report/portability.h"
#include "report/report.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

constexpr const char* kRankPrefix = "rank ";

// Per run, each rank's digest output against rank 0's: the first rank that holds other bits.
std::optional<Divergence> first_disagreement(const std::vector<ProcessObservation>& observations) {
  for (const auto& observation : observations)
    for (std::size_t run = 0; run < observation.runs.size(); ++run) {
      const std::string* rank0 = nullptr;
      for (const auto& [name, digest] : observation.runs[run].outputs) {
        if (name.rfind(kRankPrefix, 0) != 0) continue;
        if (!rank0) {
          rank0 = &digest;
          continue;
        }
        if (digest != *rank0) return Divergence{name, static_cast<int>(run), -1, 0, 0, 0};
      }
    }
  return std::nullopt;
}

// The digest of a run's result, without the ranks' own digests of it: what a baseline keeps and what
// another rank count is compared by (with ranks that agree, those add nothing).
std::string result_digest(const RunObservation& run) {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& output : run.outputs)
    if (output.first.rfind(kRankPrefix, 0) != 0) outputs.push_back(output);
  return combine_digests(outputs);
}

class CollectiveKind : public ProbeCellKind {
 public:
  const char* name() const override { return "collective"; }
  bool claims(const Cell& cell) const override { return ranks_of(cell.settings) >= 2; }

  void judge(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict) const override {
    repeat_kind().judge(cell, observations, verdict);
    if (verdict.digests_agree)
      for (const auto& observation : observations)
        if (!observation.runs.empty()) {
          verdict.digest = result_digest(observation.runs.front());
          break;
        }
    const auto add = [&](const std::string& note) {
      verdict.message = verdict.message.empty() ? note : verdict.message + "; " + note;
    };
    if (const auto disagreement = first_disagreement(observations)) {
      verdict.variations.push_back(*disagreement);
      add(fmt::format("ranks disagree: {} holds other bits than rank 0 (run {})", disagreement->output,
                      disagreement->run));
    }
    if (ranks_of(cell.settings) == 2)
      add("2 ranks: each element is a sum of two values, the same in either order, so this cell cannot show a "
          "reordering across ranks");
  }

  std::vector<std::string> detail_lines(const Verdict& verdict) const override {
    auto lines = repeat_kind().detail_lines(verdict);
    for (const auto& variation : verdict.variations)
      if (variation.output.rfind(kRankPrefix, 0) == 0)
        lines.push_back(
            fmt::format("RANKS DISAGREE: {} holds other bits than rank 0 in run {}", variation.output, variation.run));
    return lines;
  }

  // World-size-invariant: among cells equal but for `ranks`, every rank count gave the same result.
  void judge_portability(const std::vector<const CellReport*>& members, Portability& result) const override {
    std::map<std::string, std::vector<const CellReport*>> groups;
    for (const auto* member : members) {
      std::string fixed;
      for (const auto& [name, value] : member->cell.settings)
        if (name != "ranks") fixed += name + "=" + value + ";";
      groups[fixed].push_back(member);
    }
    std::set<int> counts;
    for (const auto& [fixed, group] : groups)
      for (const auto* other : group) {
        if (other->verdict.kind != VerdictKind::deterministic) return;  // no one result to compare
        counts.insert(ranks_of(other->cell.settings));
        if (other->verdict.digest != group.front()->verdict.digest) {
          const auto text = fmt::format("ranks={} vs ranks={} give different bits",
                                        ranks_of(group.front()->cell.settings), ranks_of(other->cell.settings));
          result.limit = result.limit.empty() ? text : result.limit + "; " + text;
          return;
        }
      }
    if (counts.size() < 2) {
      const auto text = std::string("one rank count measured: world-size invariance not measured");
      result.limit = result.limit.empty() ? text : result.limit + "; " + text;
      return;
    }
    result.invariance = "world-size-invariant";
  }
};

}  // namespace

const CellKind& collective_kind() {
  static const CollectiveKind kind;
  return kind;
}

}  // namespace repro_audit
