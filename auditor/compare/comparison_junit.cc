#include "compare/comparison_junit.h"

#include <fmt/format.h>

#include "compare/comparison_text.h"
#include "report/junit_xml.h"

namespace repro_audit {

std::string render_comparison_junit(const Comparison& comparison, const GateResult* gate) {
  std::vector<JUnitCase> cases;
  const GateActions actions(gate);
  for (const auto& cell : comparison.cells) {
    JUnitCase test;
    test.suite = probe_of_key(cell.key);
    test.name = cell.key;
    const auto action = actions.action(cell.key);
    const auto* finding = actions.finding(cell.key);
    const auto line = fmt::format("{}: {}", changes_text(cell.changes), cell.detail);
    if (action == GateAction::fail) {
      test.failure_message = fmt::format("{}: {}", changes_text(finding->triggers), cell.detail);
      test.failure_type = changes_text(finding->triggers);
      test.text = line;
    } else if (cell.has(Change::missing)) {
      test.skipped_message = "missing from " + comparison.after_source + ": " + cell.detail;
    } else if (!cell.has(Change::same)) {
      test.text = (action == GateAction::warn ? "warning: " : "") + line;
    }
    cases.push_back(std::move(test));
  }
  return junit_document(gate ? "repro-audit gate" : "repro-audit compare", cases);
}

}  // namespace repro_audit
