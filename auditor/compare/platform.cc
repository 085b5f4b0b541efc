#include "compare/platform.h"

#include <algorithm>

#include "report/text_format.h"

namespace repro_audit {
namespace {

// The OS and the tool's own version do not change the bits an op computes.
const std::vector<std::string> kPlatformLabels = {"torch", "CUDA runtime", "CUDA driver", "cuDNN",
                                                  "GPU",   "CPU",          "threads"};

}  // namespace

std::vector<std::pair<std::string, std::string>> platform_fields(const nlohmann::json& environment) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& field : environment_fields(environment))
    if (std::find(kPlatformLabels.begin(), kPlatformLabels.end(), field.label) != kPlatformLabels.end())
      fields.emplace_back(field.label, field.value);
  return fields;
}

}  // namespace repro_audit
