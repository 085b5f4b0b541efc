#include "explain/explanation_printers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/escape.h"
#include "report/html_page.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

using nlohmann::json;

int explained_count(const Explanation& explanation) {
  int explained = 0;
  for (const auto& cell : explanation.cells) explained += cell.explained ? 1 : 0;
  return explained;
}

std::string summary_line(const Explanation& explanation) {
  if (!explanation.not_run_here.empty())
    return fmt::format("{} cells compared; {} could not be run here, so nothing is known of their bits here",
                       explanation.compared, explanation.not_run_here.size());
  if (explanation.compared == 0) return "nothing was compared: no cell has a verdict on both sides";
  if (explanation.cells.empty())
    return fmt::format("{} cells compared; no DRIFT or NEW-NONDETERMINISM: nothing to explain", explanation.compared);
  return fmt::format("{} cells compared; {} of {} changed cells explained", explanation.compared,
                     explained_count(explanation), explanation.cells.size());
}

std::string search_line(const Explanation& explanation) {
  return fmt::format("search: {} cells run in {:.1f} s (limit {:.0f} s{}){}{}{}", explanation.candidate_cells,
                     explanation.seconds, explanation.time_limit_seconds,
                     explanation.time_limit_reached ? ", reached: the search stopped there" : "",
                     explanation.stages.empty() ? "" : ": ", fmt::join(explanation.stages, "; "),
                     explanation.stopped_early.empty() ? "" : "; stopped early: " + explanation.stopped_early);
}

// The platform sentence, then each changed field with what changed.
std::vector<std::string> environment_lines(const Explanation& explanation) {
  const auto& comparison = explanation.comparison;
  if (comparison.environment_changes.empty()) return {};
  std::vector<std::string> lines = {comparison.platform_summary};
  for (const auto& change : comparison.environment_changes)
    lines.push_back(fmt::format("{}: {}", change.field, change.difference));
  return lines;
}

}  // namespace

void print_explanation(const Explanation& explanation, std::ostream& out) {
  out << fmt::format("Explaining {} -> {}\n", explanation.before_source, explanation.after_source);
  const auto environment = environment_lines(explanation);
  out << (environment.empty() ? "Environment: unchanged\n" : "Environment changes:\n");
  for (const auto& line : environment) out << "  " << line << "\n";
  for (const auto& group : group_explanations(explanation)) {
    const auto& cell = group.first();
    const auto flag_sets = group.flag_sets();
    out << fmt::format("{} {}{}: {}\n", to_string(cell.change), group.cell(),
                       flag_sets.empty() ? "" : " (" + flag_sets + ")", explanation_headline(cell));
    for (const auto& line : group_detail_lines(group)) out << "  " << line.plain() << "\n";
  }
  out << search_line(explanation) << "\n"
      << "explain: " << summary_line(explanation) << "\n";
}

json explanation_to_json(const Explanation& explanation) {
  json j = {{"schema", kExplanationSchema},
            {"before", explanation.before_source},
            {"after", explanation.after_source},
            {"compared", explanation.compared},
            {"summary", summary_line(explanation)},
            {"environment",
             {{"platform_changed", explanation.comparison.platform_changed},
              {"platform_summary", explanation.comparison.platform_summary},
              {"changes", json::array()}}},
            {"cells", json::array()},
            {"search",
             {{"seconds", explanation.seconds},
              {"time_limit_seconds", explanation.time_limit_seconds},
              {"time_limit_reached", explanation.time_limit_reached},
              {"candidate_cells", explanation.candidate_cells},
              {"stages", explanation.stages},
              {"stopped_early", explanation.stopped_early}}}};
  if (!explanation.not_run_here.empty()) j["not_run_here"] = explanation.not_run_here;
  for (const auto& change : explanation.comparison.environment_changes)
    j["environment"]["changes"].push_back(
        {{"field", change.field}, {"before", change.before}, {"after", change.after}});
  for (const auto& cell : explanation.cells) {
    json knobs = json::array();
    for (const auto& knob : cell.knobs)
      knobs.push_back({{"setting", knob.setting}, {"value", knob.value}, {"reason", knob.reason}});
    json kernel_changes = json::array();
    for (const auto& change : cell.kernel_changes)
      kernel_changes.push_back({{"library", change.library},
                                {"aspect", change.aspect},
                                {"before", change.before},
                                {"after", change.after},
                                {"text", kernel_change_text(change)}});
    j["cells"].push_back({{"key", cell.key},
                          {"change", to_string(cell.change)},
                          {"before_digest", cell.before_digest},
                          {"after_digest", cell.after_digest},
                          {"here_digest", cell.here_digest},
                          {"here_reproduces", cell.side},
                          {"target", cell.target},
                          {"explained", cell.explained},
                          {"knobs", knobs},
                          {"candidates_tried", cell.tried},
                          {"pin", cell.pin},
                          {"command", cell.command},
                          {"note", cell.note},
                          {"inputs", cell.inputs},
                          {"kernels", cell.kernels},
                          {"kernel_changes", kernel_changes},
                          {"keyed_on", cell.keyed_on},
                          {"library_pins", cell.library_pins},
                          {"portable",
                           {{"digest", cell.portable_digest},
                            {"note", cell.portable_note},
                            {"command", cell.portable_command},
                            {"cost", cell.pin_cost}}}});
  }
  return j;
}

std::string render_explanation_markdown(const Explanation& explanation) {
  std::string md =
      fmt::format("# repro-audit explain: {}\n\n{} -> {}\n\n", markdown_text(summary_line(explanation)),
                  markdown_code(explanation.before_source, false), markdown_code(explanation.after_source, false));
  const auto environment = environment_lines(explanation);
  md += "## Environment\n\n";
  if (environment.empty()) md += "Unchanged.\n";
  for (const auto& line : environment) md += "- " + markdown_text(line) + "\n";
  md += "\n## Cells\n\n";
  for (const auto& group : group_explanations(explanation)) {
    const auto& cell = group.first();
    const auto flag_sets = group.flag_sets();
    md += fmt::format("- **{}** {}{}: {}\n", to_string(cell.change), markdown_code(group.cell(), false),
                      flag_sets.empty() ? "" : " (" + markdown_text(flag_sets) + ")",
                      markdown_text(explanation_headline(cell)));
    for (const auto& line : group_detail_lines(group))
      md += "  - " + (line.label.empty() ? "" : markdown_text(line.label) + ": ") +
            (line.command ? markdown_code(line.text, false) : markdown_text(line.text)) + "\n";
  }
  return md + "\n" + markdown_text(search_line(explanation)) + "\n";
}

std::string render_explanation_html(const Explanation& explanation) {
  std::string body =
      fmt::format("<h1>repro-audit explain</h1>\n<p>{}</p>\n<p><code>{}</code> &rarr; <code>{}</code></p>\n",
                  xml_escape(summary_line(explanation)), xml_escape(explanation.before_source),
                  xml_escape(explanation.after_source));
  body += "<h2>Environment</h2>\n<ul>\n";
  const auto environment = environment_lines(explanation);
  if (environment.empty()) body += "<li>Unchanged.</li>\n";
  for (const auto& line : environment) body += "<li>" + xml_escape(line) + "</li>\n";
  body += "</ul>\n<h2>Cells</h2>\n<table>\n<tr><th>cell</th><th>change</th><th>explanation</th></tr>\n";
  for (const auto& group : group_explanations(explanation)) {
    const auto& cell = group.first();
    std::string text = xml_escape(explanation_headline(cell));
    for (const auto& line : group_detail_lines(group))
      text += "<br>" + (line.label.empty() ? "" : xml_escape(line.label) + ": ") +
              (line.command ? "<code>" + xml_escape(line.text) + "</code>" : xml_escape(line.text));
    const auto flag_sets = group.flag_sets();
    body += fmt::format("<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(group.cell()),
                        flag_sets.empty() ? "" : "<br>" + xml_escape(flag_sets), to_string(cell.change), text);
  }
  body += "</table>\n<p>" + xml_escape(search_line(explanation)) + "</p>\n";
  return html_document("repro-audit explain", body);
}

}  // namespace repro_audit
