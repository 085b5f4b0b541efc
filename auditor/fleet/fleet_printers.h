#pragma once
// The fleet matrix as terminal text, Markdown, JSON (repro-audit.fleet/1) and one offline HTML
// heatmap page.
#include <nlohmann/json.hpp>
#include <string>

#include "fleet/fleet_matrix.h"

namespace repro_audit {

std::string fleet_text(const FleetMatrix& fleet);
std::string fleet_markdown(const FleetMatrix& fleet);
nlohmann::json fleet_json(const FleetMatrix& fleet);
std::string fleet_html(const FleetMatrix& fleet);

}  // namespace repro_audit
