#include "output/output_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/comparison_html.h"
#include "compare/comparison_json.h"
#include "compare/comparison_junit.h"
#include "compare/comparison_markdown.h"
#include "common/user_error.h"
#include "explain/explanation_printers.h"
#include "fleet/fleet_printers.h"
#include "common/atomic_file.h"
#include "report/html_printer.h"
#include "report/json_io.h"
#include "report/junit_printer.h"
#include "report/markdown_printer.h"

namespace repro_audit {
namespace {

std::string render_json(const Report& report) {
  return report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_comparison_json(const Comparison& comparison, const GateResult* gate) {
  return comparison_to_json(comparison, gate).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
std::string render_explanation_json(const Explanation& explanation) {
  return explanation_to_json(explanation).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
std::string render_fleet_json(const FleetMatrix& fleet) {
  return fleet_json(fleet).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

// An explicit table, not self-registration: static registration in a static library is dropped by
// the linker. The order is the order of --help and of the goldens.
const std::vector<OutputFormat>& output_formats() {
  static const std::vector<OutputFormat> formats = {
      {"json", "Write JSON to FILE", "json", render_json, render_comparison_json, render_explanation_json,
       render_fleet_json},
      {"junit", "Write JUnit XML to FILE (a testsuite per probe, a testcase per cell)", "junit.xml", render_junit,
       render_comparison_junit},
      {"markdown", "Write Markdown to FILE (fits a GitHub job summary)", "md", render_markdown,
       render_comparison_markdown, render_explanation_markdown, fleet_markdown},
      {"html", "Write one self-contained HTML page to FILE", "html", render_html, render_comparison_html,
       render_explanation_html, fleet_html},
  };
  return formats;
}

std::vector<std::string> output_format_names() {
  std::vector<std::string> names;
  for (const auto& format : output_formats()) names.push_back(format.name);
  return names;
}

const OutputFormat& find_output_format(const std::string& name) {
  for (const auto& format : output_formats())
    if (format.name == name) return format;
  throw UserError(
      fmt::format("unknown output format '{}'; valid formats: {}", name, fmt::join(output_format_names(), ", ")));
}

std::string render_report(const std::string& format, const Report& report) {
  return find_output_format(format).render_report(report);
}

std::string render_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate) {
  return find_output_format(format).render_comparison(comparison, gate);
}

void write_report(const std::string& format, const Report& report, const std::string& path) {
  write_file_atomically(path, render_report(format, report));
}

std::vector<std::string> write_reports(const std::vector<OutputFile>& outputs, const Report& report) {
  std::vector<FileContent> files;
  for (const auto& output : outputs) files.push_back({output.path, render_report(output.format, report)});
  return write_files_atomically(files);
}

namespace {

// The formats that have a renderer for what `Renderer` points to.
template <typename Renderer>
std::vector<const OutputFormat*> formats_with(Renderer OutputFormat::*renderer) {
  std::vector<const OutputFormat*> formats;
  for (const auto& format : output_formats())
    if (format.*renderer) formats.push_back(&format);
  return formats;
}

template <typename Renderer, typename Subject>
std::vector<std::string> write_with(const std::vector<OutputFile>& outputs, Renderer OutputFormat::*renderer,
                                    const Subject& subject, const char* command) {
  std::vector<FileContent> files;
  for (const auto& output : outputs) {
    const auto& format = find_output_format(output.format);
    if (!(format.*renderer)) throw UserError(fmt::format("{} has no {} form", command, output.format));
    files.push_back({output.path, (format.*renderer)(subject)});
  }
  return write_files_atomically(files);
}

}  // namespace

std::vector<const OutputFormat*> explanation_formats() { return formats_with(&OutputFormat::render_explanation); }

std::vector<std::string> write_explanations(const std::vector<OutputFile>& outputs, const Explanation& explanation) {
  return write_with(outputs, &OutputFormat::render_explanation, explanation, "explain");
}

std::vector<const OutputFormat*> fleet_formats() { return formats_with(&OutputFormat::render_fleet); }

std::vector<std::string> write_fleets(const std::vector<OutputFile>& outputs, const FleetMatrix& fleet) {
  return write_with(outputs, &OutputFormat::render_fleet, fleet, "fleet");
}

std::vector<std::string> write_comparisons(const std::vector<OutputFile>& outputs, const Comparison& comparison,
                                           const GateResult* gate) {
  std::vector<FileContent> files;
  for (const auto& output : outputs) files.push_back({output.path, render_comparison(output.format, comparison, gate)});
  return write_files_atomically(files);
}

}  // namespace repro_audit
