#include "compare/comparison_terminal.h"

#include <fmt/format.h>

#include <algorithm>

#include "compare/comparison_text.h"

namespace repro_audit {
namespace {

std::string action_text(GateAction action, bool color) {
  const char* text = action == GateAction::fail ? "FAIL" : action == GateAction::warn ? "WARN" : "    ";
  if (!color || action == GateAction::ignore) return text;
  return fmt::format("{}{}\033[0m", action == GateAction::fail ? "\033[1;31m" : "\033[33m", text);
}

// A line per field: label, how it counts, what changed ("AVX512 -> AVX2", "-avx512f +amx_tile").
void print_environment(const Comparison& comparison, const GateResult* gate, std::ostream& out) {
  if (comparison.environment_changes.empty()) {
    out << "Environment: unchanged\n";
    return;
  }
  out << "Environment: changed\n";
  out << "  " << (gate ? platform_sentence(comparison) : comparison.platform_summary + ".") << "\n";
  if (!comparison.timing_note.empty()) out << "  " << comparison.timing_note << "\n";
  std::size_t width = 0, status_width = 0;
  for (const auto& change : comparison.environment_changes) {
    width = std::max(width, change.field.size());
    status_width = std::max(status_width, platform_status(change).size());
  }
  for (const auto& change : comparison.environment_changes)
    out << fmt::format("  {:<{}}  {:<{}}  {}\n", change.field, width, platform_status(change), status_width,
                       change.difference);
}

}  // namespace

void print_comparison(const Comparison& comparison, const GateResult* gate, std::ostream& out, bool color) {
  out << comparison_title(comparison, gate) << "\n";
  out << "before: " << comparison.before_source << "\n";
  out << "after:  " << comparison.after_source << "\n";
  if (gate) out << "policy: " << gate->policy_source << "\n";
  out << "\n";
  print_environment(comparison, gate, out);
  out << fmt::format("\nCells: {} (slower/faster: the p10-p90 spread moved beyond {:.0f}%)\n",
                     headline_counts_text(comparison), comparison.slower_threshold * 100);
  std::size_t width = 0;
  for (const auto& cell : comparison.cells) width = std::max(width, changes_text(cell.changes).size());
  for (const auto& finding : findings_to_list(comparison, gate, false)) {
    const auto prefix = gate ? action_text(finding.action, color) + "  " : std::string();
    const auto flag_sets = finding.flag_sets();
    out << fmt::format("  {}{:<{}}  {}{}\n", prefix, changes_text(finding.first().changes), width, finding.cell(),
                       flag_sets.empty() ? "" : "  (" + flag_sets + ")");
    const auto& detail = finding.first().detail;
    if (!detail.empty()) out << fmt::format("  {}{:<{}}  {}\n", gate ? "      " : "", "", width, detail);
  }
}

}  // namespace repro_audit
