#include "compare/comparison_html.h"

#include <fmt/format.h>

#include "compare/comparison_text.h"
#include "report/escape.h"
#include "report/html_page.h"

namespace repro_audit {
namespace {

// The change classes and gate actions: only comparison pages use them.
constexpr const char* kComparisonStyle =
    R"(.c-same{background:#eaeef2;}.c-new{background:#c9def7;}.c-missing{background:#eaeef2;color:#57606a;}
.c-broke{background:#d2271e;color:#fff;}.c-new-nondeterminism{background:#f7b6b2;}.c-drift{background:#fbd0a5;}
.c-fixed{background:#c8ebd0;}.c-kernels-changed{background:#e6dcfb;}.c-slower{background:#fde7a9;}.c-faster{background:#d3f5e0;}
.a-fail{color:#82071e;font-weight:700;}.a-warn{color:#7d4e00;font-weight:700;}
)";

std::string environment_section(const Comparison& comparison, const GateResult* gate) {
  std::string html = "<h2>Environment</h2>\n";
  if (comparison.environment_changes.empty()) return html + "<p>Unchanged.</p>\n";
  html +=
      fmt::format("<p>{}</p>\n", xml_escape(gate ? platform_sentence(comparison) : comparison.platform_summary + "."));
  if (!comparison.timing_note.empty()) html += fmt::format("<p>{}</p>\n", xml_escape(comparison.timing_note));
  html += "<table>\n<tr><th>field</th><th>before</th><th>after</th><th>counts as</th></tr>\n";
  for (const auto& change : comparison.environment_changes) {
    const auto [before, after] = change_sides(change);
    html += fmt::format("<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(change.field),
                        xml_escape(before), xml_escape(after), platform_status(change));
  }
  return html + "</table>\n";
}

std::string verdict_cell(const std::optional<SnapshotCell>& cell) {
  return cell ? xml_escape(to_string(cell->verdict)) : "-";
}

std::string cells_section(const Comparison& comparison, const GateResult* gate) {
  std::string html = "<h2>Cells</h2>\n<p class=\"legend\">";
  for (const auto& [change, count] : count_headlines(comparison))
    html += fmt::format("<span class=\"{}\">{} {}</span>", change_css_class(change), count, to_string(change));
  html += "</p>\n<table>\n<tr>";
  if (gate) html += "<th>gate</th>";
  html += "<th>class</th><th>cell</th><th>before</th><th>after</th><th>detail</th></tr>\n";
  for (const auto& finding : findings_to_list(comparison, gate, true)) {
    const auto& cell = finding.first();
    html += "<tr>";
    if (gate)
      html += finding.action == GateAction::ignore
                  ? "<td></td>"
                  : fmt::format("<td class=\"a-{0}\">{0}</td>", to_string(finding.action));
    const auto flag_sets = finding.flag_sets();
    html += fmt::format("<td class=\"{}\">{}</td><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        change_css_class(cell.changes.front()), xml_escape(changes_text(cell.changes)),
                        xml_escape(finding.cell()), flag_sets.empty() ? "" : " (" + xml_escape(flag_sets) + ")",
                        verdict_cell(cell.before), verdict_cell(cell.after), xml_escape(cell.detail));
  }
  return html + "</table>\n";
}

std::string time_chart(const Comparison& comparison) {
  std::vector<ChartBar> bars;
  for (const auto& cell : comparison.cells) {
    if (!cell.before || !cell.after || cell.before->timing.samples <= 0 || cell.after->timing.samples <= 0 ||
        cell.before->timing.median_ns <= 0)
      continue;
    const double ratio =
        static_cast<double>(cell.after->timing.median_ns) / static_cast<double>(cell.before->timing.median_ns);
    const char* css_class = cell.has(Change::slower) ? "bar-slow" : cell.has(Change::faster) ? "bar-fast" : "bar-even";
    bars.push_back({cell.key, ratio, css_class});
  }
  if (bars.empty()) return "";
  return "<h2>Time against before</h2>\n" +
         svg_ratio_chart(bars, "median time after over median time before (dashed line: 1.0x)");
}

}  // namespace

std::string render_comparison_html(const Comparison& comparison, const GateResult* gate) {
  const auto title = comparison_title(comparison, gate);
  std::string body =
      fmt::format("<h1 class=\"{}\">{}</h1>\n", gate && !gate->passed ? "failed" : "passed", xml_escape(title));
  body += fmt::format("<p>before <code>{}</code>, after <code>{}</code>", xml_escape(comparison.before_source),
                      xml_escape(comparison.after_source));
  if (gate) body += fmt::format("; policy: {}", xml_escape(gate->policy_source));
  body += fmt::format("; slower or faster: the p10-p90 spread moved beyond {:.0f}%</p>\n",
                      comparison.slower_threshold * 100);
  body += environment_section(comparison, gate) + cells_section(comparison, gate) + time_chart(comparison);
  return html_document(title, body, kComparisonStyle);
}

}  // namespace repro_audit
