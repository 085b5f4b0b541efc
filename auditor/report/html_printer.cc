#include "report/html_printer.h"

#include <fmt/format.h>

#include "report/escape.h"
#include "report/html_page.h"
#include "report/terminal_printer.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

std::string cell_anchor(const Report& report, const CellReport& cell) {
  return fmt::format("cell-{}", &cell - report.cells.data());
}

std::string heatmap(const Report& report) {
  std::string html = "<h2>Verdict matrix</h2>\n<table>\n<tr><th>probe/variant</th>";
  for (const auto& column : report.columns) html += fmt::format("<th>{}</th>", xml_escape(column));
  html += "<th>portability</th></tr>\n";
  const auto portability = row_portability(report.portability);
  for (const auto& row : verdict_matrix(report)) {
    html += fmt::format("<tr><th><code>{}</code></th>", xml_escape(row.name));
    for (const auto* cell : row.cells) {
      if (!cell) {
        html += "<td></td>";
        continue;
      }
      std::string classes = "cell " + verdict_css_class(cell->verdict);
      if (cell->contradiction && cell->contradiction->breaks_audit) classes += " contradiction";
      std::string text = verdict_mark(*cell);
      if (cell->cost) text.append(" ").append(cost_text(*cell->cost));
      html += fmt::format("<td class=\"{}\" title=\"{}\"><a href=\"#{}\">{}</a></td>", classes,
                          xml_escape(cell->cell.key + ": " + verdict_headline(*cell)), cell_anchor(report, *cell),
                          xml_escape(text));
    }
    const auto level = portability.find(row.name);
    if (level == portability.end())
      html += "<td>-</td></tr>\n";
    else
      html += fmt::format("<td class=\"portability\" title=\"{}\">{}</td></tr>\n", xml_escape(level->second->limit),
                          level_text(*level->second));
  }
  html += "</table>\n<p class=\"legend\">";
  for (const auto& entry : verdict_legend()) {
    const auto classes = entry.css_class.empty() ? "" : fmt::format(" class=\"{}\"", entry.css_class);
    html += fmt::format("<span{}>{} {}</span>", classes, xml_escape(entry.mark), xml_escape(entry.meaning));
  }
  return html + "</p>\n";
}

std::string cost_chart(const Report& report) {
  std::vector<ChartBar> bars;
  for (const auto& cell : report.cells) {
    if (!cell.cost) continue;
    const double ratio = cell.cost->value;
    // Only a ratio whose 95% interval excludes 1 is a cost (or a saving); the rest is noise.
    const char* css_class = !cell.cost->measurable() ? "bar-even" : ratio > 1 ? "bar-slow" : "bar-fast";
    bars.push_back({cell.cell.probe + "/" + cell.cell.variant + " " + cell.cell.label, ratio, css_class});
  }
  if (bars.empty()) return "";
  return "<h2>Cost against the default profile</h2>\n" +
         svg_ratio_chart(bars, "median time over the default profile's median (dashed line: 1.0x)");
}

std::string kernel_lists(const CellReport& cell) {
  std::string html;
  for (const auto& [digest, kernels] : kernel_sequences(cell)) {
    html += fmt::format("<p>Kernel sequence <code>{}</code> ({} kernels):</p>\n<ol>\n",
                        xml_escape(short_digest(digest)), kernels.size());
    for (const auto& kernel : kernels) {
      html += fmt::format("<li><code>{}</code>", xml_escape(kernel.name));
      if (!kernel.grid.empty())
        html += fmt::format(" grid ({}) block ({})", xml_escape(kernel.grid), xml_escape(kernel.block));
      html += "</li>\n";
    }
    html += "</ol>\n";
  }
  return html;
}

std::string cell_details(const Report& report) {
  std::string html = "<h2>Cells</h2>\n";
  for (const auto& cell : report.cells) {
    const bool failing = is_failing(cell.verdict) || (cell.contradiction && cell.contradiction->breaks_audit);
    html +=
        fmt::format("<details id=\"{}\"{}><summary><span class=\"{}\">{}</span> <code>{}</code>: {}</summary>\n<ul>\n",
                    cell_anchor(report, cell), failing ? " open" : "", verdict_css_class(cell.verdict),
                    xml_escape(verdict_mark(cell)), xml_escape(cell.cell.key), xml_escape(verdict_headline(cell)));
    for (const auto& line : verdict_details(cell)) html += fmt::format("<li>{}</li>\n", xml_escape(line));
    html += "</ul>\n" + kernel_lists(cell) + "</details>\n";
  }
  return html;
}

std::string findings(const Report& report) {
  std::string html;
  for (const auto& group : finding_groups(report)) {
    html += "<h2>" + xml_escape(group.heading) + "</h2>\n<ul>\n";
    for (const auto* cell : group.cells)
      html += fmt::format("<li><strong>{}</strong> <code>{}</code>: {}</li>\n",
                          cell->contradiction->breaks_audit ? "FAIL" : "note", xml_escape(cell->cell.key),
                          xml_escape(cell->contradiction->text));
    html += "</ul>\n";
  }
  if (!report.notes.empty()) {
    html += "<h2>Settings that change the bits of deterministic results</h2>\n<ul>\n";
    for (const auto& note : report.notes) html += fmt::format("<li>{}</li>\n", xml_escape(note.text));
    html += "</ul>\n";
  }
  if (!report.portability.empty()) {
    html += "<h2>Portability: how far the bits carry</h2>\n<ul>\n";
    for (const auto& entry : report.portability)
      html +=
          fmt::format("<li><code>{}/{}</code>{}: <strong>{}</strong>{}</li>\n", xml_escape(entry.probe),
                      xml_escape(entry.variant), entry.settings.empty() ? "" : " (" + xml_escape(entry.settings) + ")",
                      level_text(entry), entry.limit.empty() ? "" : "; " + xml_escape(entry.limit));
    html += "</ul>\n";
  }
  return html;
}

}  // namespace

std::string verdict_css_class(const Verdict& verdict) {
  switch (verdict.kind) {
    case VerdictKind::error:
    case VerdictKind::crashed:
    case VerdictKind::timeout:
      return "v-broken";
    default:
      return std::string("v-") + to_string(verdict.kind);
  }
}

std::string render_html(const Report& report) {
  const bool failed = audit_failed(report, report_fail_on(report));
  std::string body = fmt::format("<h1>repro-audit report: <span class=\"{}\">{}</span></h1>\n",
                                 failed ? "failed" : "passed", failed ? "FAILED" : "passed");
  body += fmt::format("<p>{} cells on <code>{}</code>: {}; {:.1f} s; repro-audit {}</p>\n", report.cells.size(),
                      xml_escape(report.device), xml_escape(verdict_counts(report)), report.duration_seconds,
                      xml_escape(report.tool_version));
  if (!report.complete) body += "<p class=\"failed\">Interrupted: only the cells that finished are reported.</p>\n";
  body += "<p>" + xml_escape(documentation_line(report)) + "</p>\n";
  for (const auto& line : power_lines(report)) body += "<p>" + xml_escape(line) + "</p>\n";
  body += heatmap(report) + cost_chart(report) + findings(report) + cell_details(report);
  body += "<h2>Environment</h2>\n" + html_environment_table(report.environment);
  return html_document("repro-audit report", body);
}

}  // namespace repro_audit
