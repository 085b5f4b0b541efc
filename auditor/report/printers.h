#pragma once
// The report formats by name, for `run --json/--junit/--markdown/--html FILE` (several at once).
// Adding a format: one printer file pair, one row in the table in printers.cc, one golden test.
#include <string>
#include <vector>

#include "report/report.h"

namespace repro_audit {

struct ReportFormat {
  std::string name;  // json, junit, markdown, html
  std::string (*render)(const Report& report);
};

const std::vector<ReportFormat>& report_formats();
std::vector<std::string> report_format_names();

// Throws UserError naming the valid formats when `format` is unknown.
std::string render_report(const std::string& format, const Report& report);

// Renders and writes atomically; throws UserError when the file cannot be written.
void write_report(const std::string& format, const Report& report, const std::string& path);

struct OutputFile {
  std::string format;
  std::string path;
};

// Every requested file; all are rendered before the first is written, so an unknown format leaves
// no partial set behind. A file that cannot be written does not stop the others: returns a message
// per failed file.
std::vector<std::string> write_reports(const std::vector<OutputFile>& outputs, const Report& report);

}  // namespace repro_audit
