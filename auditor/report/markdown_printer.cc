#include "report/markdown_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/escape.h"
#include "report/matrix_layout.h"
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
  const auto matrix = verdict_matrix(report);
  const auto portability = row_portability(report.portability);
  auto text_of = [](const CellReport* cell, bool costs) {
    std::string text = cell ? verdict_mark(*cell) : "";
    if (cell && costs && cell->cost) text.append(" ").append(cost_text(*cell->cost));
    return markdown_text(text);
  };
  auto level_of = [&](const std::string& row) {
    const auto level = portability.find(row);
    return level == portability.end() ? std::string("-") : level_text(*level->second);
  };
  std::size_t row_width = display_width("probe/variant"), level_width = display_width("portability");
  for (const auto& row : matrix) {
    row_width = std::max(row_width, display_width(markdown_code(row.name, true)));
    level_width = std::max(level_width, display_width(level_of(row.name)));
  }
  // A source line: "| row |" + " cell |" per column + " level |".
  const auto layout = fit_matrix(
      report.columns, {row_width + 4 + level_width + 3, 3}, true,
      [&](std::size_t column, bool costs) {
        std::size_t width = 0;
        for (const auto& row : matrix) width = std::max(width, display_width(text_of(row.cells[column], costs)));
        return width;
      },
      kMatrixLineLimit, false);
  std::string md = "## Verdicts\n\n";
  for (const auto& [first, last] : layout.groups) {
    const bool last_group = last == report.columns.size();
    md += "| probe/variant |";
    std::string rule = "| --- |";
    for (std::size_t i = first; i < last; ++i) {
      std::vector<std::string> words;  // a Markdown header has one line: stacked words join with a break
      for (const auto& line : layout.header)
        if (!line[i].empty()) words.push_back(markdown_text(line[i]));
      md += fmt::format(" {} |", fmt::join(words, "<br>"));
      rule += " :---: |";
    }
    md += last_group ? " portability |\n" + rule + " --- |\n" : "\n" + rule + "\n";
    for (const auto& row : matrix) {
      md += fmt::format("| {} |", markdown_code(row.name, true));
      for (std::size_t i = first; i < last; ++i) md += fmt::format(" {} |", text_of(row.cells[i], layout.costs));
      md += last_group ? fmt::format(" {} |\n", level_of(row.name)) : "\n";
    }
    if (!last_group) md += "\n";
  }
  if (!layout.legend.empty()) md += "\n";
  for (const auto& line : layout.legend) md += "- " + markdown_text(line) + "\n";
  if (!layout.costs) md += "\nCosts left out to fit the table: `repro-audit show REPORT` gives each cell's.\n";
  // The legend: one paragraph, its source lines within the same limit (a line break inside a Markdown
  // paragraph renders as a space).
  std::vector<std::string> legend;
  for (const auto& entry : verdict_legend(layout.costs))
    legend.push_back(markdown_text(entry.mark + " " + entry.meaning));
  return md + fmt::format("\n{}\n\n", fmt::join(wrap_items(legend, " · "), "\n"));
}

// Every variant's level per in-process settings, with what broke the next level.
std::string portability_section(const Report& report) {
  if (report.portability.empty()) return "";
  std::string md = "## Portability: how far the bits carry\n\n";
  for (const auto& entry : report.portability)
    md += fmt::format("- {}{}{}: **{}**{}\n", markdown_code(entry.probe + "/" + entry.variant, false),
                      entry.settings.empty() ? "" : " ",
                      markdown_text(entry.settings.empty() ? "" : "(" + entry.settings + ")"), level_text(entry),
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
  for (const auto& group : finding_groups(report)) {
    md += "## " + group.heading + "\n\n";
    for (const auto* cell : group.cells)
      md += fmt::format("- **{}** {}: {}\n", cell->contradiction->breaks_audit ? "FAIL" : "note",
                        markdown_code(cell->cell.key, false), markdown_text(cell->contradiction->text));
    md += "\n";
  }
  bool any = false;
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
