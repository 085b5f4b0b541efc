#pragma once
// The file formats (json, junit, markdown, html): one registry that the CLI builds its options from
// (--<name> FILE on run, compare, gate, explain and fleet) and the golden tests iterate. A format renders both an
// audit report and a comparison, so it registers once; this folder may use report/ and compare/,
// which is why the registry is not in report/ (report/ must not depend on compare/).
// Adding a format: one printer file pair, one row in the table in output_format.cc, then
// tools/update-golden writes its goldens (report, compare and gate) for review.
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/gate_policy.h"
#include "explain/explain.h"
#include "fleet/fleet_matrix.h"
#include "report/report.h"

namespace repro_audit {

struct OutputFormat {
  std::string name;       // the CLI option is --<name>
  std::string help;       // that option's help text
  std::string extension;  // usual file name ending, e.g. "junit.xml"; names the golden files
  std::string (*render_report)(const Report& report);
  // `gate` is null for compare.
  std::string (*render_comparison)(const Comparison& comparison, const GateResult* gate);
  // Null when the format has no form for `explain` (JUnit: an explanation is not a test result).
  std::string (*render_explanation)(const Explanation& explanation) = nullptr;
  // Null when the format has no form for `fleet` (JUnit).
  std::string (*render_fleet)(const FleetMatrix& fleet) = nullptr;
};

const std::vector<OutputFormat>& output_formats();
std::vector<std::string> output_format_names();

// Throws UserError naming the valid formats when `name` is unknown.
const OutputFormat& find_output_format(const std::string& name);
std::string render_report(const std::string& format, const Report& report);
std::string render_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate);

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
// The formats `explain` writes: those with an explanation renderer.
std::vector<const OutputFormat*> explanation_formats();
std::vector<std::string> write_explanations(const std::vector<OutputFile>& outputs, const Explanation& explanation);
// The formats `fleet` writes: those with a fleet renderer.
std::vector<const OutputFormat*> fleet_formats();
std::vector<std::string> write_fleets(const std::vector<OutputFile>& outputs, const FleetMatrix& fleet);
std::vector<std::string> write_comparisons(const std::vector<OutputFile>& outputs, const Comparison& comparison,
                                           const GateResult* gate);

}  // namespace repro_audit
