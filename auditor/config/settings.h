#pragma once
// The reproducibility knobs repro-audit sweeps, and the named flag sets (profiles) built from them.
#include <map>
#include <string>
#include <vector>

namespace repro_audit {

inline constexpr const char* kNotApplicable = "n/a";

enum class SettingScope { in_process, process };

// How a setting takes part in deterministic mode (torch.use_deterministic_algorithms).
enum class DeterminismRole {
  none,
  mode,          // the switch itself; its values are off, on and warn (warn_only=True)
  prerequisite,  // deterministic mode needs it off its default, e.g. CUBLAS_WORKSPACE_CONFIG for cuBLAS
};

enum class DeterministicMode { off, on, warn };

// How far a setting's values reach when a result is carried to another machine: the levels of
// report/portability.h. A variant whose bits hold across every value of the `threads` settings is
// thread-count-invariant; across every value of the `isa` settings too, isa-invariant.
// `ranks`: a collective cell's rank count, whose level (world-size-invariant) stands beside the
// ladder (kinds/collective_kind.h).
enum class PortabilityRole { none, threads, isa, ranks };

// Everything the tool knows about a setting. Adding a setting is a row in setting_specs() (config/setting_specs.cc;
// and, for an in-process setting, its libtorch call in apply/settings_apply.cc and its Python spelling in the row);
// keys of existing cells do not change as long as the new setting's default is what happened before it existed (see
// plan/cell_key.h).
struct SettingSpec {
  std::string name;
  std::vector<std::string> values;  // empty: any non-negative integer
  std::string default_value;        // documented; part of the cell key rule, so it never changes
  SettingScope scope;
  bool on_cpu;
  bool on_cuda;
  std::string help;
  // Process settings passed through the worker's environment: the variable, set to the value; the
  // value "unset" (and "n/a") removes the variable instead. Empty: not an environment variable.
  std::string environment_variable = "";
  DeterminismRole determinism = DeterminismRole::none;
  PortabilityRole portability = PortabilityRole::none;
  // Environment settings: the value that removes the variable besides "unset" (e.g. "native").
  std::string removed_by = "";
  // Integer settings only: the accepted range.
  long minimum = 0;
  long maximum = 999999999;
  // In-process settings: the Python line(s) that put torch in this state, for `repro`'s scripts.
  // Environment settings are spelled from their variable, and `seed` is the script's SEED; a setting
  // with none of these has no Python form (tests/core/repro_script_test.cc finds it).
  std::string (*python)(const std::string& value) = nullptr;
  // torch.compile's and Inductor's switches: they reach a py cell's callable only, set by the runner in
  // the user's interpreter; no other cell has their columns (plan) or tries them (explain).
  bool py_cells_only = false;
  // Inductor's switches: they change nothing of an eager run, so a plan has no eager cell with them.
  bool compiled_only = false;
};

inline constexpr const char* kUnset = "unset";
// Environment settings whose default is kInherit leave the user's variable as it is: the fingerprint
// records it as that platform's, and only an explicit value changes it.
inline constexpr const char* kInherit = "inherit";

// One concrete value per setting, keyed by setting name; "n/a" where the setting does not apply.
using FlagSet = std::map<std::string, std::string>;

const std::vector<SettingSpec>& setting_specs();
const SettingSpec* find_setting(const std::string& name);
std::vector<std::string> setting_names();

// True when `value` is valid for the setting (integers for settings without a value list, written
// as the tool writes them: "3", never "03", so one cell never has two keys).
bool is_valid_value(const SettingSpec& spec, const std::string& value);
// A value as a person may type it, in the one form keys hold: an integer's leading zeros dropped
// ("03" -> "3", "00" -> "0"); anything else as it is.
std::string normalised_value(const SettingSpec& spec, const std::string& value);
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

// The worker's environment for its process settings: each setting's variable, or "" to remove it.
std::map<std::string, std::string> setting_environment(const FlagSet& flags);

// True when no environment setting with an inherit default is changed: a worker with these process
// settings sees the user's own environment, so its fingerprint is the platform's.
bool inherits_environment(const FlagSet& flags);

// The `compile` setting names a mode (a py cell whose callable torch.compile compiles); off when absent.
bool compiles(const FlagSet& flags);

// The value of the `mode` setting (off when absent or not applicable).
DeterministicMode deterministic_mode(const FlagSet& flags);
// Every applicable `prerequisite` setting is off its default (the cuBLAS workspace is configured).
bool deterministic_prerequisites_met(const FlagSet& flags);

// The axes `--matrix portability` sweeps: cpu_capability native and each ATen level below the best of
// `runnable_levels` (the ATEN_CPU_CAPABILITY values this CPU runs, lowest first), mkl_cbwr unset and
// COMPATIBLE, and `threads`.
std::map<std::string, std::vector<std::string>> portability_axes(const std::vector<std::string>& runnable_levels,
                                                                 const std::vector<std::string>& threads);

// "cpu", "cuda" from "cpu", "cuda", "cuda:1".
std::string device_kind(const std::string& device);

}  // namespace repro_audit
