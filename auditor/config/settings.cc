#include "config/settings.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace repro_audit {

const std::vector<SettingSpec>& setting_specs() {
  using S = SettingScope;
  static const std::vector<SettingSpec> specs = {
      {"allow_tf32",
       {"false", "true"},
       "false",
       S::in_process,
       false,
       true,
       "TF32 in cuBLAS matmuls and cuDNN convolutions"},
      {"cublas_workspace_config",
       {"unset", ":4096:8", ":16:8"},
       "unset",
       S::process,
       false,
       true,
       "CUBLAS_WORKSPACE_CONFIG in the worker's environment before cuBLAS starts"},
      {"cudnn_benchmark",
       {"false", "true"},
       "false",
       S::in_process,
       false,
       true,
       "cudnn.benchmark: time candidate algorithms and keep the fastest"},
      {"cudnn_deterministic",
       {"false", "true"},
       "false",
       S::in_process,
       false,
       true,
       "cudnn.deterministic: only deterministic convolution algorithms"},
      {"cudnn_enabled", {"true", "false"}, "true", S::in_process, false, true, "cudnn.enabled"},
      {"deterministic_algorithms",
       {"off", "on", "warn"},
       "off",
       S::in_process,
       true,
       true,
       "torch.use_deterministic_algorithms (warn = warn_only=True)"},
      {"fill_uninitialized_memory",
       {"true", "false"},
       "true",
       S::in_process,
       true,
       true,
       "fill new uninitialised memory with NaN when deterministic algorithms are on"},
      {"seed", {}, "0", S::in_process, true, true, "torch.manual_seed before every run"},
      // 0 is no thread pool at all, and more threads than any machine has cores is a typo that would only
      // surface as a worker failing to start them.
      {"threads", {}, "2", S::process, true, false, "intra-op threads (at::set_num_threads)", 1, 1024},
  };
  return specs;
}

const SettingSpec* find_setting(const std::string& name) {
  for (const auto& spec : setting_specs())
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<std::string> setting_names() {
  std::vector<std::string> names;
  for (const auto& spec : setting_specs()) names.push_back(spec.name);
  return names;
}

bool is_valid_value(const SettingSpec& spec, const std::string& value) {
  if (spec.values.empty()) {
    if (value.empty() || value.size() > 9 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    const long number = std::stol(value);
    return number >= spec.minimum && number <= spec.maximum;
  }
  return std::find(spec.values.begin(), spec.values.end(), value) != spec.values.end();
}

std::string describe_values(const SettingSpec& spec) {
  if (spec.values.empty()) return fmt::format("an integer from {} to {}", spec.minimum, spec.maximum);
  return fmt::format("{}", fmt::join(spec.values, ", "));
}

std::string device_kind(const std::string& device) { return device.substr(0, device.find(':')); }

bool applies_to(const SettingSpec& spec, const std::string& device) {
  return device_kind(device) == "cuda" ? spec.on_cuda : spec.on_cpu;
}

const std::map<std::string, FlagSet>& profiles() {
  static const std::map<std::string, FlagSet> table = {
      {"default", {}},
      {"cudnn-pinned", {{"cudnn_deterministic", "true"}, {"cudnn_benchmark", "false"}}},
      {"strict",
       {{"deterministic_algorithms", "on"},
        {"cudnn_deterministic", "true"},
        {"cudnn_benchmark", "false"},
        {"cublas_workspace_config", ":4096:8"}}},
      {"strict-warn",
       {{"deterministic_algorithms", "warn"},
        {"cudnn_deterministic", "true"},
        {"cudnn_benchmark", "false"},
        {"cublas_workspace_config", ":4096:8"}}},
      {"no-cudnn", {{"cudnn_enabled", "false"}}},
  };
  return table;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const auto& [name, flags] : profiles()) names.push_back(name);
  return names;
}

FlagSet make_flag_set(const FlagSet& overrides, const std::string& device) {
  FlagSet flags;
  for (const auto& spec : setting_specs()) {
    auto it = overrides.find(spec.name);
    flags[spec.name] =
        applies_to(spec, device) ? (it != overrides.end() ? it->second : spec.default_value) : kNotApplicable;
  }
  return flags;
}

std::string canonical_settings(const FlagSet& flags) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : flags)
    if (value != kNotApplicable) parts.push_back(name + "=" + value);
  return fmt::format("{}", fmt::join(parts, ","));
}

FlagSet process_settings(const FlagSet& flags) {
  FlagSet result;
  for (const auto& spec : setting_specs()) {
    auto it = flags.find(spec.name);
    if (spec.scope == SettingScope::process && it != flags.end()) result[spec.name] = it->second;
  }
  return result;
}

}  // namespace repro_audit
