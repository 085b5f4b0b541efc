#include "report/printers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/user_error.h"
#include "report/atomic_file.h"
#include "report/html_printer.h"
#include "report/json_io.h"
#include "report/junit_printer.h"
#include "report/markdown_printer.h"

namespace repro_audit {
namespace {

std::string render_json(const Report& report) { return report_to_json(report).dump(2) + "\n"; }

}  // namespace

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats = {
      {"json", render_json},
      {"junit", render_junit},
      {"markdown", render_markdown},
      {"html", render_html},
  };
  return formats;
}

std::vector<std::string> report_format_names() {
  std::vector<std::string> names;
  for (const auto& format : report_formats()) names.push_back(format.name);
  return names;
}

std::string render_report(const std::string& format, const Report& report) {
  for (const auto& candidate : report_formats())
    if (candidate.name == format) return candidate.render(report);
  throw UserError(
      fmt::format("unknown output format '{}'; valid formats: {}", format, fmt::join(report_format_names(), ", ")));
}

void write_report(const std::string& format, const Report& report, const std::string& path) {
  write_file_atomically(path, render_report(format, report));
}

std::vector<std::string> write_reports(const std::vector<OutputFile>& outputs, const Report& report) {
  std::vector<FileContent> files;
  for (const auto& output : outputs) files.push_back({output.path, render_report(output.format, report)});
  return write_files_atomically(files);
}

}  // namespace repro_audit
