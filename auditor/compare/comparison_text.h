#pragma once
// Wording shared by the comparison printers, so the terminal, Markdown, HTML and JUnit agree.
#include <string>
#include <unordered_map>
#include <utility>

#include "compare/compare.h"
#include "compare/gate_policy.h"

namespace repro_audit {

// "repro-audit gate: FAILED (2 failing cells, 1 warning)", "repro-audit gate: passed",
// "repro-audit compare: 3 of 12 cells changed". `gate` is null for compare.
std::string comparison_title(const Comparison& comparison, const GateResult* gate);

// "DRIFT+SLOWER"
std::string changes_text(const std::vector<Change>& changes);

// "10 SAME, 1 DRIFT"
std::string headline_counts_text(const Comparison& comparison);

// What the gate did with each cell, by key; ignore for every cell when there is no gate. Built once
// per printed comparison: searching the findings for each cell would be quadratic.
class GateActions {
 public:
  explicit GateActions(const GateResult* gate);
  GateAction action(const std::string& key) const;
  // The finding behind a fail or warn, else null.
  const GateFinding* finding(const std::string& key) const;

 private:
  std::unordered_map<std::string, std::pair<GateAction, const GateFinding*>> by_key_;
};

// Cells listed as one finding: cells of one probe/variant@device (the key before '|') that changed
// the same way under several flag sets: the same classes, verdicts, gate action and detail. The
// terminal, Markdown and HTML list findings; JSON and JUnit list every cell, and counts stay per cell.
struct ListedFinding {
  std::vector<const CellComparison*> cells;  // in listing order; the first stands for all
  GateAction action = GateAction::ignore;
  const CellComparison& first() const { return *cells.front(); }
  // The key of a lone cell, else the part the cells share: "matmul/f32@cpu".
  std::string cell() const;
  // "" for a lone cell, else "6 flag sets: defaults, threads=1, deterministic_algorithms=on, ..." (the
  // part of each key after '|', "defaults" when none; the first few, then how many more).
  std::string flag_sets() const;
};

// The part of a cell key before '|' ("matmul/f32@cpu"), and "6 flag sets: defaults, threads=1, ..."
// for keys of one such part ("" for fewer than two keys).
std::string key_variant(const std::string& key);
std::string key_flag_set(const std::string& key);  // the part after '|'; "defaults" when none
std::string flag_sets_text(const std::vector<std::string>& keys);

// cells_to_list, with the cells that changed the same way grouped, each group where its first cell is.
std::vector<ListedFinding> findings_to_list(const Comparison& comparison, const GateResult* gate, bool include_same);

// "NEW-NONDETERMINISM" -> "c-new-nondeterminism": the CSS class of a headline class.
std::string change_css_class(Change change);

// The cells a reader should see first: failing, then warning, then the rest, each by headline
// precedence, the comparison's order within; SAME cells only when `include_same`.
std::vector<const CellComparison*> cells_to_list(const Comparison& comparison, const GateResult* gate,
                                                 bool include_same);

// One sentence on the platform: what changed and which rules the gate applies.
std::string platform_sentence(const Comparison& comparison);

// The before and after cells of an environment change's row: the values ("not recorded" when
// absent); for a set recorded on both sides, what only it had ("-avx512f -avx512bw", "+amx_tile").
std::pair<std::string, std::string> change_sides(const EnvironmentChange& change);

// How an environment change counts: "platform", "unknown" (a platform field recorded on one side
// only: counted as possibly changed) or "not platform".
std::string platform_status(const EnvironmentChange& change);

}  // namespace repro_audit
