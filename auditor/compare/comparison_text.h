#pragma once
// Wording shared by the comparison printers, so the terminal, Markdown, HTML and JUnit agree.
#include <string>

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

// What the gate did with a cell; ignore when there is no gate.
GateAction cell_action(const GateResult* gate, const std::string& key);

// "NEW-NONDETERMINISM" -> "c-new-nondeterminism": the CSS class of a headline class.
std::string change_css_class(Change change);

// The cells a reader should see first: failing, then warning, then the rest, each by headline
// precedence, the comparison's order within; SAME cells only when `include_same`.
std::vector<const CellComparison*> cells_to_list(const Comparison& comparison, const GateResult* gate,
                                                 bool include_same);

// One sentence on the platform: which rules the gate applies.
std::string platform_sentence(const Comparison& comparison);

}  // namespace repro_audit
