#include "report/markdown_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/escape.h"
#include "report/terminal_printer.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

std::string environment_section(const Report& report) {
  std::string md = "## Environment\n\n| field | value |\n| --- | --- |\n";
  for (const auto& field : environment_fields(report.environment))
    if (!field.value.empty()) md += fmt::format("| {} | {} |\n", field.label, markdown_text(field.value));
  return md + "\n";
}

std::string matrix_section(const Report& report) {
  std::string md = "## Verdicts\n\n| probe/variant |";
  std::string rule = "| --- |";
  for (const auto& column : report.columns) {
    md += fmt::format(" {} |", markdown_text(column));
    rule += " :---: |";
  }
  md += " portability |\n" + rule + " --- |\n";
  const auto portability = row_portability(report.portability);
  for (const auto& row : verdict_matrix(report)) {
    md += fmt::format("| {} |", markdown_code(row.name, true));
    for (const auto* cell : row.cells) {
      std::string text = cell ? verdict_mark(*cell) : "";
      if (cell && cell->cost) text += " " + cost_text(*cell->cost);
      md += fmt::format(" {} |", markdown_text(text));
    }
    const auto level = portability.find(row.name);
    md += fmt::format(" {} |\n", level == portability.end() ? "-" : level_text(*level->second));
  }
  std::vector<std::string> legend;
  for (const auto& entry : verdict_legend()) legend.push_back(markdown_text(entry.mark + " " + entry.meaning));
  return md + fmt::format("\n{}\n\n", fmt::join(legend, " · "));
}

// Every variant's level per in-process settings, with what broke the next level.
std::string portability_section(const Report& report) {
  if (report.portability.empty()) return "";
  std::string md = "## Portability: how far the bits carry\n\n";
  for (const auto& entry : report.portability)
    md += fmt::format("- {}{}: **{}**{}\n", markdown_code(entry.probe + "/" + entry.variant, false),
                      entry.settings.empty() ? "" : " " + markdown_text("(" + entry.settings + ")"), level_text(entry),
                      entry.limit.empty() ? "" : markdown_text("; " + entry.limit));
  return md + "\n";
}

std::string kernel_block(const CellReport& cell) {
  std::string md;
  for (const auto& [digest, kernels] : kernel_sequences(cell)) {
    std::string names;
    for (const auto& kernel : kernels) names += kernel.name + "\n";
    const auto fence = markdown_fence(names);
    md +=
        fmt::format("Kernels {}:\n\n{}text\n{}{}\n\n", markdown_code(short_digest(digest), false), fence, names, fence);
  }
  return md;
}

// Collapsed per cell; GitHub renders Markdown inside <details> only after a blank line.
std::string cell_section(const CellReport& cell) {
  std::string md = fmt::format("<details><summary><code>{}</code>: {}</summary>\n\n", xml_escape(cell.cell.key),
                               xml_escape(verdict_headline(cell)));
  for (const auto& line : verdict_details(cell)) md += "- " + markdown_text(line) + "\n";
  md += '\n';  // not "\n" + ...: GCC 12 warns falsely (-Wrestrict) on that concatenation
  md += kernel_block(cell);
  return md + "</details>\n\n";
}

}  // namespace

std::string render_markdown(const Report& report) {
  const bool failed = audit_failed(report, report_fail_on(report));
  std::string md = fmt::format("# repro-audit: {}\n\n", failed ? "FAILED" : "passed");
  md += fmt::format("{} cells on {}: {}; {:.1f} s; repro-audit {}\n\n", report.cells.size(),
                    markdown_code(report.device, false), markdown_text(verdict_counts(report)), report.duration_seconds,
                    markdown_text(report.tool_version));
  if (!report.complete) md += "**Interrupted:** only the cells that finished are reported.\n\n";
  md += markdown_text(documentation_line(report)) + "\n\n";
  for (const auto& line : power_lines(report)) md += markdown_text(line) + "\n\n";
  md += environment_section(report);
  md += matrix_section(report);
  md += portability_section(report);
  bool any = false;
  for (const auto& cell : report.cells) {
    if (!cell.contradiction) continue;
    if (!any) md += "## Contradictions with PyTorch's documentation\n\n";
    any = true;
    md += fmt::format("- **{}** {}: {}\n", cell.contradiction->breaks_audit ? "FAIL" : "note",
                      markdown_code(cell.cell.key, false), markdown_text(cell.contradiction->text));
  }
  if (any) md += "\n";
  if (!report.notes.empty()) {
    md += "## Settings that change the bits of deterministic results\n\n";
    for (const auto& note : report.notes) md += "- " + markdown_text(note.text) + "\n";
    md += "\n";
  }
  any = false;
  for (const auto& cell : report.cells) {
    if (!is_failing(cell.verdict) && !(cell.contradiction && cell.contradiction->breaks_audit)) continue;
    if (!any) md += "## Failing cells\n\n";
    any = true;
    md += cell_section(cell);
  }
  return md;
}

}  // namespace repro_audit
