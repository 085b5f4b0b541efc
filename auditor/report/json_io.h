#pragma once
// JSON forms of the plain values: the worker protocol and the report file share them.
#include <nlohmann/json.hpp>

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
// Throws UserError naming `source` when the JSON is not a report of this schema.
Report report_from_json(const nlohmann::json& json, const std::string& source);
Report parse_report(const std::string& text, const std::string& source);
Report load_report_file(const std::string& path);

}  // namespace repro_audit
