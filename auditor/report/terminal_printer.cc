#include "report/terminal_printer.h"

#include "kind/cell_kind.h"

#include <fmt/format.h>

#include <algorithm>
#include <fmt/ranges.h>
#include <map>
#include <set>

#include "report/escape.h"
#include "report/matrix_layout.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

std::string pad(const std::string& text, std::size_t width) {
  return text + std::string(width > display_width(text) ? width - display_width(text) : 0, ' ');
}

const char* color_of(const CellReport& cell) {
  if (cell.contradiction && cell.contradiction->breaks_audit) return "\033[1;31m";
  if (is_skipped(cell.verdict)) return "\033[2m";
  return is_failing(cell.verdict) ? "\033[33m" : "\033[32m";
}

std::string cost_of(const CellReport& cell) { return cell.cost ? " " + cost_text(*cell.cost) : ""; }

}  // namespace

std::string verdict_mark(const CellReport& cell) {
  std::string mark;
  switch (cell.verdict.kind) {
    case VerdictKind::deterministic:
      mark = "✓";
      break;
    case VerdictKind::nondeterministic:
      mark = "✗";
      break;
    case VerdictKind::warns:
      mark = cell.verdict.digests_agree ? "W✓" : "W✗";
      break;
    case VerdictKind::raises:
      mark = "R";
      break;
    case VerdictKind::unsupported:
      mark = "skip";
      break;
    case VerdictKind::error:
      mark = "ERR";
      break;
    case VerdictKind::crashed:
      mark = "CRASH";
      break;
    case VerdictKind::timeout:
      mark = "TIME";
      break;
    case VerdictKind::invariant:
      mark = "=";
      break;
    case VerdictKind::varies:
      mark = "≠";
      break;
  }
  if (cell.contradiction) mark += cell.contradiction->breaks_audit ? "!" : "?";
  return mark;
}

void print_matrix(const Report& report, std::ostream& out, const TerminalOptions& options) {
  std::vector<std::string> rows;
  std::set<std::string> seen_rows;  // searching `rows` for each cell would be quadratic
  std::map<std::pair<std::string, std::string>, const CellReport*> by_position;
  for (const auto& cell : report.cells) {
    const auto row = cell.cell.probe + "/" + cell.cell.variant;
    if (seen_rows.insert(row).second) rows.push_back(row);
    by_position[{row, cell.cell.label}] = &cell;
  }
  auto at = [&](const std::string& row, std::size_t column) -> const CellReport* {
    const auto it = by_position.find({row, report.columns[column]});
    return it == by_position.end() ? nullptr : it->second;
  };
  auto text_of = [&](const CellReport* cell, bool costs) {
    return cell ? verdict_mark(*cell) + (costs ? cost_of(*cell) : "") : std::string();
  };
  // The last column: how far each row's bits carry (report/portability.h).
  const auto portability = row_portability(report.portability);
  auto portability_text = [&](const std::string& row) {
    const auto it = portability.find(row);
    return it == portability.end() ? std::string("-") : level_text(*it->second);
  };
  std::size_t row_width = 8, portability_width = display_width("portability");
  for (const auto& row : rows) {
    row_width = std::max(row_width, display_width(row));
    portability_width = std::max(portability_width, display_width(portability_text(row)));
  }
  const auto layout = fit_matrix(report.columns, {row_width + 2 + portability_width, 2}, options.show_cost,
                                 [&](std::size_t column, bool costs) {
                                   std::size_t width = 0;
                                   for (const auto& row : rows)
                                     width = std::max(width, display_width(text_of(at(row, column), costs)));
                                   return width;
                                 });
  for (const auto& [first, last] : layout.groups) {
    std::vector<std::size_t> widths;
    for (std::size_t i = first; i < last; ++i) {
      std::size_t width = header_width(layout, i);
      for (const auto& row : rows) width = std::max(width, display_width(text_of(at(row, i), layout.costs)));
      widths.push_back(width);
    }
    const bool last_group = last == report.columns.size();
    for (std::size_t line = 0; line < layout.header.size(); ++line) {
      std::string text = pad("", row_width);
      for (std::size_t i = first; i < last; ++i) text += "  " + pad(layout.header[line][i], widths[i - first]);
      if (last_group && line + 1 == layout.header.size()) text += "  portability";
      out << text.substr(0, text.find_last_not_of(' ') + 1) << "\n";
    }
    for (const auto& row : rows) {
      out << pad(row, row_width);
      for (std::size_t i = first; i < last; ++i) {
        const auto* cell = at(row, i);
        const auto padded = pad(text_of(cell, layout.costs), widths[i - first]);
        if (options.color && cell)
          out << "  " << color_of(*cell) << padded << "\033[0m";
        else
          out << "  " << padded;
      }
      out << (last_group ? "  " + portability_text(row) : std::string()) << "\n";
    }
  }
  for (const auto& line : layout.legend) out << "  " << line << "\n";
  if (options.show_cost && !layout.costs)
    out << "costs left out to fit " << kMatrixLineLimit << " columns: `repro-audit show REPORT` gives each cell's\n";
  // The marks' legend, wrapped at the same limit.
  std::vector<std::string> legend;
  for (const auto& entry : verdict_legend(layout.costs)) legend.push_back(entry.mark + " " + entry.meaning);
  for (const auto& line : wrap_items(legend, "  ")) out << line << "\n";
}

void print_summary(const Report& report, FailOn fail_on, std::ostream& out) {
  std::map<VerdictKind, int> counts;
  for (const auto& cell : report.cells) ++counts[cell.verdict.kind];
  out << "\n" << documentation_line(report) << "\n";
  for (const auto& group : finding_groups(report)) {
    out << "\n" << group.heading << ":\n";
    for (const auto* cell : group.cells)
      out << fmt::format("  {} {}: {}\n", cell->contradiction->breaks_audit ? "FAIL" : "note", cell->cell.key,
                         terminal_text(cell->contradiction->text));
  }
  bool any_model = false;
  for (const auto& cell : report.cells) {
    const auto lines = kind_of(cell.cell).detail_lines(cell.verdict);
    if (lines.empty() || cell.verdict.diverged_outputs.empty()) continue;
    if (!any_model) out << "\nWhere the model's divergence starts:\n";
    any_model = true;
    out << "  " << cell.cell.key << "\n";
    for (const auto& line : lines) out << "    " << line << "\n";
  }
  bool any_finding = false;  // what the runs of cells whose outputs agreed showed beside the bits
  for (const auto& cell : report.cells) {
    if (cell.verdict.findings.empty() || !cell.verdict.diverged_outputs.empty()) continue;
    if (!any_finding) out << "\nFound beside the bits:\n";
    any_finding = true;
    out << "  " << cell.cell.key << "\n";
    for (const auto& finding : cell.verdict.findings) out << "    " << terminal_text(finding) << "\n";
  }
  if (!report.notes.empty()) {
    out << "\nSettings that change the bits of deterministic results:\n";
    for (const auto& note : report.notes) out << "  " << note.text << "\n";
  }
  if (report.shard)
    out << fmt::format("\nShard {}/{} of a plan of {} cells (from {}, balanced by {})\n", report.shard->index,
                       report.shard->count, report.shard->plan.size(), report.shard->source, report.shard->balance);
  if (report.merge && !report.merge->missing_shards.empty())
    out << fmt::format("\nPartial: shard{} {} missing, {} cells of the plan not audited\n",
                       report.merge->missing_shards.size() == 1 ? "" : "s",
                       fmt::join(report.merge->missing_shards, ", "), report.merge->missing_cells.size());
  const auto power = power_lines(report);
  if (!power.empty()) out << "\n";
  for (const auto& line : power) out << line << "\n";
  std::vector<std::string> parts;
  for (const auto& [kind, count] : counts) parts.push_back(fmt::format("{} {}", count, to_string(kind)));
  const bool failed = audit_failed(report, fail_on);
  const char* outcome = !report.complete                          ? "INTERRUPTED"
                        : failed                                  ? "FAILED"
                        : !nothing_audited_reason(report).empty() ? "NOTHING AUDITED"
                                                                  : "passed";
  out << fmt::format("\n{} cells{}{}; {:.1f} s; {}\n", report.cells.size(), parts.empty() ? "" : ": ",
                     fmt::join(parts, ", "), report.duration_seconds, outcome);
}

}  // namespace repro_audit
