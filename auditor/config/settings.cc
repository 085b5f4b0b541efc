#include "config/settings.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace repro_audit {

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
    if (value.empty() || value.size() > 9 || (value.size() > 1 && value[0] == '0') ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    const long number = std::stol(value);
    return number >= spec.minimum && number <= spec.maximum;
  }
  return std::find(spec.values.begin(), spec.values.end(), value) != spec.values.end();
}

std::string normalised_value(const SettingSpec& spec, const std::string& value) {
  if (!spec.values.empty() || value.empty() ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return value;
  const auto first = value.find_first_not_of('0');
  return first == std::string::npos ? "0" : value.substr(first);
}

std::string describe_values(const SettingSpec& spec) {
  if (spec.values.empty()) return fmt::format("an integer from {} to {}", spec.minimum, spec.maximum);
  return fmt::format("{}", fmt::join(spec.values, ", "));
}

std::map<std::string, std::vector<std::string>> portability_axes(const std::vector<std::string>& runnable_levels,
                                                                 const std::vector<std::string>& threads) {
  const auto& known = find_setting("cpu_capability")->values;
  std::vector<std::string> levels = {"native"};
  // The best level is what "native" gives; every level below it is one an older host would run.
  for (auto it = runnable_levels.rbegin(); it != runnable_levels.rend(); ++it)
    if (it != runnable_levels.rbegin() && std::find(known.begin(), known.end(), *it) != known.end())
      levels.push_back(*it);
  if (levels.size() == 1) levels.push_back("default");
  return {{"cpu_capability", levels}, {"mkl_cbwr", {kUnset, "COMPATIBLE"}}, {"threads", threads}};
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
      // What makes CPU results the same on every x86 host: ATen's generic kernels and MKL's compatible
      // branch. The thread count also changes bits (sum); it is the `threads` axis, crossed with this.
      {"portable", {{"cpu_capability", "default"}, {"mkl_cbwr", "COMPATIBLE"}}},
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

std::map<std::string, std::string> setting_environment(const FlagSet& flags) {
  std::map<std::string, std::string> environment;
  for (const auto& spec : setting_specs()) {
    if (spec.environment_variable.empty()) continue;
    const auto it = flags.find(spec.name);
    if (it != flags.end() && it->second == kInherit) continue;  // the user's own value, or none
    const bool set =
        it != flags.end() && it->second != kUnset && it->second != kNotApplicable && it->second != spec.removed_by;
    environment[spec.environment_variable] = set ? it->second : "";
  }
  return environment;
}

DeterministicMode deterministic_mode(const FlagSet& flags) {
  for (const auto& spec : setting_specs()) {
    if (spec.determinism != DeterminismRole::mode) continue;
    const auto it = flags.find(spec.name);
    if (it == flags.end()) continue;
    if (it->second == "on") return DeterministicMode::on;
    if (it->second == "warn") return DeterministicMode::warn;
  }
  return DeterministicMode::off;
}

bool compiles(const FlagSet& flags) {
  const auto compile = flags.find("compile");
  return compile != flags.end() && compile->second != "off" && compile->second != kNotApplicable;
}

bool inherits_environment(const FlagSet& flags) {
  for (const auto& spec : setting_specs()) {
    if (spec.environment_variable.empty() || spec.default_value != kInherit) continue;
    const auto it = flags.find(spec.name);
    if (it != flags.end() && it->second != kInherit && it->second != kNotApplicable) return false;
  }
  return true;
}

bool deterministic_prerequisites_met(const FlagSet& flags) {
  for (const auto& spec : setting_specs()) {
    if (spec.determinism != DeterminismRole::prerequisite) continue;
    const auto it = flags.find(spec.name);
    if (it == flags.end() || it->second == kNotApplicable || it->second == spec.default_value) return false;
  }
  return true;
}

}  // namespace repro_audit
