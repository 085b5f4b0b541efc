#pragma once
// The fleet's hosts and platforms: names for the hosts, and each report's platform fields read by the
// gate's own reader (compare/platform.h), so the fleet and the gate agree on what a platform is.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleet/fleet_matrix.h"

namespace repro_audit {

// The fields of an environment that count for the platform; a set-valued field (CPU flags) as its
// sorted members, so two orders are one platform.
PlatformFields platform_fields(const nlohmann::json& environment);

// The value of `label`, "" when the fingerprint lacks it.
std::string platform_value(const PlatformFields& fields, const std::string& label);

// "NVIDIA A100-SXM4-80GB, driver 12.8, CUDA 12.8, cuDNN 9.1, torch 2.14.1, AVX2"
std::string platform_summary_text(const PlatformFields& fields);

// Each report's host, else its file's name without extension; a name two reports share gets the
// file: "gpu-7 (a/gpu-7.json)".
std::vector<FleetHost> name_fleet_hosts(const std::vector<ReportFile>& inputs);

}  // namespace repro_audit
