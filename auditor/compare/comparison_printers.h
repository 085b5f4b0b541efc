#pragma once
// The comparison formats by name, for `compare` and `gate` with --json/--junit/--markdown/--html FILE.
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/gate_policy.h"
#include "report/printers.h"

namespace repro_audit {

struct ComparisonFormat {
  std::string name;  // json, junit, markdown, html: the same names as the report formats
  std::string (*render)(const Comparison& comparison, const GateResult* gate);
};

const std::vector<ComparisonFormat>& comparison_formats();

// `gate` is null for compare. Throws UserError naming the valid formats when `format` is unknown.
std::string render_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate);
void write_comparison(const std::string& format, const Comparison& comparison, const GateResult* gate,
                      const std::string& path);
// Renders every file before writing the first; returns a message per file that could not be written.
std::vector<std::string> write_comparisons(const std::vector<OutputFile>& outputs, const Comparison& comparison,
                                           const GateResult* gate);

}  // namespace repro_audit
