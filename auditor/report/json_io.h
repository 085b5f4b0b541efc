#pragma once
// JSON forms of the plain values: the worker protocol and the report file share them.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace repro_audit {

void to_json(nlohmann::json& j, const KernelRecord& value);
void from_json(const nlohmann::json& j, KernelRecord& value);
void to_json(nlohmann::json& j, const RunObservation& value);
void from_json(const nlohmann::json& j, RunObservation& value);
void to_json(nlohmann::json& j, const Divergence& value);
void from_json(const nlohmann::json& j, Divergence& value);
void to_json(nlohmann::json& j, const ProcessObservation& value);
void from_json(const nlohmann::json& j, ProcessObservation& value);
void to_json(nlohmann::json& j, const Cell& value);
void from_json(const nlohmann::json& j, Cell& value);
void to_json(nlohmann::json& j, const Timing& value);
void from_json(const nlohmann::json& j, Timing& value);

nlohmann::json report_to_json(const Report& report);

// A report's JSON with the cells converted one by one while parsing, so the JSON of every cell is
// never held at once. The schema is not checked yet: a JSON baseline parses too.
struct ParsedReport {
  nlohmann::json header;  // every field but the cells
  std::vector<CellReport> cells;
  std::optional<std::string> cell_error;  // why the first unreadable cell could not be read
};
ParsedReport parse_report_json(const std::string& text, const std::string& source);

// Each throws UserError naming `source` when the JSON is not a report of this schema, or a digest
// is not 32 lower-case hex digits.
Report report_from_parsed(ParsedReport&& parsed, const std::string& source);
Report report_from_json(const nlohmann::json& json, const std::string& source);
Report parse_report(const std::string& text, const std::string& source);
Report load_report_file(const std::string& path);

}  // namespace repro_audit
