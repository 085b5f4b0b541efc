#pragma once
// The reproducibility knobs repro-audit sweeps, and the named flag sets (profiles) built from them.
#include <map>
#include <string>
#include <vector>

namespace repro_audit {

inline constexpr const char* kNotApplicable = "n/a";

enum class SettingScope { in_process, process };

struct SettingSpec {
  std::string name;
  std::vector<std::string> values;  // empty: any non-negative integer
  std::string default_value;
  SettingScope scope;
  bool on_cpu;
  bool on_cuda;
  std::string help;
  // Integer settings only: the accepted range.
  long minimum = 0;
  long maximum = 999999999;
};

// One concrete value per setting, keyed by setting name; "n/a" where the setting does not apply.
using FlagSet = std::map<std::string, std::string>;

const std::vector<SettingSpec>& setting_specs();
const SettingSpec* find_setting(const std::string& name);
std::vector<std::string> setting_names();

// True when `value` is valid for the setting (integers for settings without a value list).
bool is_valid_value(const SettingSpec& spec, const std::string& value);
std::string describe_values(const SettingSpec& spec);

bool applies_to(const SettingSpec& spec, const std::string& device);

// Profiles: partial assignments over the defaults, e.g. strict = {deterministic_algorithms: on}.
const std::map<std::string, FlagSet>& profiles();
std::vector<std::string> profile_names();

// Defaults overlaid with `overrides`, then collapsed for the device.
FlagSet make_flag_set(const FlagSet& overrides, const std::string& device);

// Only the settings that apply, in name order: "deterministic_algorithms=on,threads=2".
std::string canonical_settings(const FlagSet& flags);

// The settings a worker process must be started with (environment, thread pool).
FlagSet process_settings(const FlagSet& flags);

// "cpu", "cuda" from "cpu", "cuda", "cuda:1".
std::string device_kind(const std::string& device);

}  // namespace repro_audit
