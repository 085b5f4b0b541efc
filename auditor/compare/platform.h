#pragma once
// The gate's definition of a platform: the fingerprint fields whose change can change bits or kernel
// choice. DRIFT on a changed platform is expected; on an unchanged one it is a regression.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace repro_audit {

// The platform fields as text ("" when absent), in a fixed order.
std::vector<std::pair<std::string, std::string>> platform_fields(const nlohmann::json& environment);

}  // namespace repro_audit
