#pragma once
// The fleet matrix as terminal text, Markdown, JSON (repro-audit.fleet/1) and one offline HTML
// heatmap page (fleet_html.cc).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleet/fleet_matrix.h"

namespace repro_audit {

std::string fleet_text(const FleetMatrix& fleet);
std::string fleet_markdown(const FleetMatrix& fleet);
nlohmann::json fleet_json(const FleetMatrix& fleet);
std::string fleet_html(const FleetMatrix& fleet);

// The pieces every fleet printer shares.
// "A", "B", ... "Z", "AA": a digest group's name (0 = the group of the most hosts).
std::string fleet_group_name(int group);
// One host's result in a matrix cell: its group's name, "ND", "skip", "-" (not run there), "raises", ...
std::string fleet_mark(const FleetEntry& entry);
// The last column: "portable: same bits on 4 hosts", "2 groups: differs exactly where GPU differs", ...
std::string fleet_verdict_text(const FleetMatrix& fleet, const FleetCell& cell);
// The hosts in column order: platform by platform.
std::vector<std::size_t> fleet_columns(const FleetMatrix& fleet);

}  // namespace repro_audit
