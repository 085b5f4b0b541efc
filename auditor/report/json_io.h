#pragma once
// The report file: JSON of the report model (observations use the worker protocol's JSON forms).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "protocol/observation_json.h"
#include "report/report.h"

namespace repro_audit {

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

// A report with the file it came from (merge and fleet name their inputs by file).
struct ReportFile {
  std::string file;
  Report report;
};
std::vector<ReportFile> load_report_files(const std::vector<std::string>& paths);

// A report's `shard`; a journal header keeps the same form. from_json throws json::exception when
// the shard is not K/N with 1 <= K <= N.
nlohmann::json shard_to_json(const ShardInfo& shard);
ShardInfo shard_from_json(const nlohmann::json& json);

}  // namespace repro_audit
