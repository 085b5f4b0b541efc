#include "fleet/fleet_platforms.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "compare/platform.h"
#include "report/escape.h"

namespace repro_audit {

PlatformFields platform_fields(const nlohmann::json& environment) {
  PlatformFields fields;
  for (const auto& field : fingerprint_fields(environment)) {
    if (!field.counts_for_platform) continue;
    auto value = field.value;
    if (field.is_set) {  // a set: its members in order, so two orders are one platform
      auto members = field.members;
      std::sort(members.begin(), members.end());
      value = fmt::format("{}", fmt::join(members, " "));
    }
    fields.emplace_back(terminal_text(field.label), terminal_text(value));
  }
  return fields;
}

std::string platform_value(const PlatformFields& fields, const std::string& label) {
  for (const auto& [name, value] : fields)
    if (name == label) return value;
  return "";
}

std::string platform_summary_text(const PlatformFields& fields) {
  std::vector<std::string> parts;
  const auto gpu = platform_value(fields, "GPU");
  parts.push_back(gpu.empty() || gpu == "none" ? platform_value(fields, "CPU") : gpu);
  for (const auto& [label, prefix] : PlatformFields{{"CUDA driver", "driver "},
                                                    {"CUDA runtime", "CUDA "},
                                                    {"cuDNN", "cuDNN "},
                                                    {"torch", "torch "},
                                                    {"ATen capability", ""}})
    if (const auto value = platform_value(fields, label); !value.empty() && value != "none" && value != "0")
      parts.push_back(prefix + value);
  std::erase(parts, std::string());
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<FleetHost> name_fleet_hosts(const std::vector<ReportFile>& inputs) {
  std::vector<FleetHost> hosts;
  std::map<std::string, int> uses;
  for (const auto& input : inputs) {
    // A host name and a fingerprint come from the report: every printer shows them as one line of text.
    auto name = terminal_text(input.report.host.empty() ? std::filesystem::path(input.file).stem().string()
                                                        : input.report.host);
    ++uses[name];
    hosts.push_back({name, input.file, 0});
  }
  for (auto& host : hosts)
    if (uses[host.name] > 1) host.name = fmt::format("{} ({})", host.name, host.file);
  return hosts;
}

}  // namespace repro_audit
