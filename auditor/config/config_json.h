#pragma once
// The resolved config as JSON: kept in reports and journals, read back when an audit resumes.
#include <nlohmann/json.hpp>

#include "config/config.h"

namespace repro_audit {

nlohmann::json config_to_json(const Config& config);
// Throws UserError naming `source` when the JSON is not a config this version wrote.
Config config_from_json(const nlohmann::json& json, const std::string& source);

}  // namespace repro_audit
