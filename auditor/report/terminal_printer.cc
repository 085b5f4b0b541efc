#include "report/terminal_printer.h"

#include "kinds/cell_kind.h"

#include <fmt/format.h>

#include <algorithm>
#include <fmt/ranges.h>
#include <map>
#include <set>

#include "report/text_format.h"

namespace repro_audit {
namespace {

// Columns count code points, not bytes: the marks are UTF-8.
std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

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
  std::size_t row_width = 8;
  for (const auto& row : rows) row_width = std::max(row_width, display_width(row));
  std::vector<std::size_t> widths;
  for (const auto& column : report.columns) {
    std::size_t width = display_width(column);
    for (const auto& row : rows) {
      auto it = by_position.find({row, column});
      if (it != by_position.end())
        width =
            std::max(width, display_width(verdict_mark(*it->second) + (options.show_cost ? cost_of(*it->second) : "")));
    }
    widths.push_back(width);
  }
  // The last column: how far each row's bits carry (report/portability.h).
  const auto portability = row_portability(report.portability);
  auto portability_text = [&](const std::string& row) {
    const auto it = portability.find(row);
    return it == portability.end() ? std::string("-") : level_text(*it->second);
  };
  out << pad("", row_width);
  for (std::size_t i = 0; i < report.columns.size(); ++i) out << "  " << pad(report.columns[i], widths[i]);
  out << "  portability\n";
  for (const auto& row : rows) {
    out << pad(row, row_width);
    for (std::size_t i = 0; i < report.columns.size(); ++i) {
      auto it = by_position.find({row, report.columns[i]});
      std::string text = it == by_position.end() ? "" : verdict_mark(*it->second);
      if (it != by_position.end() && options.show_cost) text += cost_of(*it->second);
      const auto padded = pad(text, widths[i]);
      if (options.color && it != by_position.end())
        out << "  " << color_of(*it->second) << padded << "\033[0m";
      else
        out << "  " << padded;
    }
    out << "  " << portability_text(row) << "\n";
  }
  std::vector<std::string> legend;
  for (const auto& entry : verdict_legend(options.show_cost)) legend.push_back(entry.mark + " " + entry.meaning);
  out << fmt::format("{}\n", fmt::join(legend, "  "));
}

void print_summary(const Report& report, FailOn fail_on, std::ostream& out) {
  std::map<VerdictKind, int> counts;
  for (const auto& cell : report.cells) ++counts[cell.verdict.kind];
  bool any_contradiction = false;
  out << "\n" << documentation_line(report) << "\n";
  for (const auto& cell : report.cells) {
    if (!cell.contradiction) continue;
    if (!any_contradiction) out << "\nContradictions with PyTorch's documentation:\n";
    any_contradiction = true;
    out << fmt::format("  {} {}: {}\n", cell.contradiction->breaks_audit ? "FAIL" : "note", cell.cell.key,
                       cell.contradiction->text);
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
