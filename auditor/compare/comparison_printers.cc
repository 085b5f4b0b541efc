#include "compare/comparison_printers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/comparison_html.h"
#include "compare/comparison_json.h"
#include "compare/comparison_junit.h"
#include "compare/comparison_markdown.h"
#include "config/user_error.h"
#include "report/atomic_file.h"

namespace repro_audit {
namespace {

std::string render_json(const Comparison& comparison, const GateResult* gate) {
  return comparison_to_json(comparison, gate).dump(2) + "\n";
}

}  // namespace

const std::vector<ComparisonFormat>& comparison_formats() {
  static const std::vector<ComparisonFormat> formats = {
      {"json", render_json},
      {"junit", render_comparison_junit},
      {"markdown", render_comparison_markdown},
      {"html", render_comparison_html},
  };
  return formats;
}

std::string render_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate) {
  std::vector<std::string> names;
  for (const auto& candidate : comparison_formats()) {
    if (candidate.name == format) return candidate.render(comparison, gate);
    names.push_back(candidate.name);
  }
  throw UserError(fmt::format("unknown output format '{}'; valid formats: {}", format, fmt::join(names, ", ")));
}

void write_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate,
                      const std::string& path) {
  write_file_atomically(path, render_comparison(format, comparison, gate));
}

std::vector<std::string> write_comparisons(const std::vector<OutputFile>& outputs, const Comparison& comparison,
                                           const GateResult* gate) {
  std::vector<FileContent> files;
  for (const auto& output : outputs) files.push_back({output.path, render_comparison(output.format, comparison, gate)});
  return write_files_atomically(files);
}

}  // namespace repro_audit
