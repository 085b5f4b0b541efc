#include "compare/comparison_markdown.h"

#include <fmt/format.h>

#include "compare/comparison_text.h"
#include "report/escape.h"

namespace repro_audit {
namespace {

std::string markdown_environment_section(const Comparison& comparison, const GateResult* gate) {
  std::string md = "## Environment\n\n";
  if (comparison.environment_changes.empty()) return md + "Unchanged.\n\n";
  md += markdown_text(gate ? platform_sentence(comparison) : comparison.platform_summary + ".") + "\n\n";
  if (!comparison.timing_note.empty()) md += markdown_text(comparison.timing_note) + "\n\n";
  md += "| field | before | after | counts as |\n| --- | --- | --- | --- |\n";
  for (const auto& change : comparison.environment_changes) {
    const auto [before, after] = change_sides(change);
    md += fmt::format("| {} | {} | {} | {} |\n", markdown_text(change.field), markdown_text(before),
                      markdown_text(after), platform_status(change));
  }
  return md + "\n";
}

std::string markdown_cells_section(const Comparison& comparison, const GateResult* gate) {
  std::string md = "## Cells\n\n| class | cells |\n| --- | ---: |\n";
  for (const auto& [change, count] : count_headlines(comparison))
    md += fmt::format("| {} | {} |\n", to_string(change), count);
  md += fmt::format("\nSlower or faster: beyond {:.0f}% of the measured spread (the new p10 past the old p90).\n\n",
                    comparison.slower_threshold * 100);
  std::string rows;
  for (const auto& finding : findings_to_list(comparison, gate, false)) {
    if (gate) {
      const auto action = finding.action;
      rows += action == GateAction::fail ? "| **FAIL** " : action == GateAction::warn ? "| WARN " : "| ";
    }
    const auto flag_sets = finding.flag_sets();
    rows += fmt::format(
        "| {} | {}{} | {} |\n", changes_text(finding.first().changes), markdown_code(finding.cell(), true),
        flag_sets.empty() ? "" : " (" + markdown_text(flag_sets) + ")", markdown_text(finding.first().detail));
  }
  if (rows.empty()) return md + "No cell changed.\n";
  return md +
         (gate ? "| gate | change | cell | detail |\n| --- | --- | --- | --- |\n"
               : "| change | cell | detail |\n| --- | --- | --- |\n") +
         rows;
}

}  // namespace

std::string render_comparison_markdown(const Comparison& comparison, const GateResult* gate) {
  std::string md = fmt::format("# {}\n\n", comparison_title(comparison, gate));
  md += fmt::format("Before: {} · after: {}", markdown_code(comparison.before_source, false),
                    markdown_code(comparison.after_source, false));
  if (gate) md += fmt::format(" · policy: {}", markdown_text(gate->policy_source));
  md += "\n\n" + markdown_environment_section(comparison, gate) + markdown_cells_section(comparison, gate);
  return md;
}

}  // namespace repro_audit
