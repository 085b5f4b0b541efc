// explain's candidate knobs for a cell, most likely first (explain/explain.h).
#include <fmt/format.h>

#include <algorithm>

#include "config/model_spec.h"
#include "explain/explain.h"
#include "explain/library_keys.h"

namespace repro_audit {
namespace {

using nlohmann::json;

std::string text_at(const json& object, const char* name) {
  if (!object.is_object() || !object.contains(name)) return "";
  const auto& value = object.at(name);
  return value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

constexpr const char* kSettingsTable = "settings table";

bool has_knob(const std::vector<Knob>& knobs, const std::string& setting, const std::string& value) {
  return std::any_of(knobs.begin(), knobs.end(),
                     [&](const Knob& knob) { return knob.setting == setting && knob.value == value; });
}

// The values worth trying for a setting on this machine, besides the cell's own.
std::vector<std::string> table_values(const SettingSpec& spec, const Cell& cell, const json& other,
                                      const ExplainOptions& options) {
  std::vector<std::string> values;
  if (spec.values.empty()) {  // integers: the thread counts either side would use by default, and 1 and 2
    for (const auto& value : {std::string("1"), std::string("2"), text_at(other, "threads"),
                              text_at(options.here, "threads"), text_at(options.here, "logical_cpus")})
      if (is_valid_value(spec, value) && std::find(values.begin(), values.end(), value) == values.end())
        values.push_back(value);
  } else {
    for (const auto& value : spec.values) {
      if (value == kInherit) continue;  // that is this machine as is
      if (spec.name == "cpu_capability" && value != "native" &&
          std::find(options.runnable_capabilities.begin(), options.runnable_capabilities.end(), value) ==
              options.runnable_capabilities.end())
        continue;  // this CPU cannot run it: the cell would be skipped
      values.push_back(value);
    }
  }
  const auto current = cell.settings.find(spec.name);
  if (current != cell.settings.end()) std::erase(values, current->second);
  return values;
}

}  // namespace

std::vector<Knob> candidate_knobs(const Cell& cell, const json& other, const ExplainOptions& options,
                                  const std::vector<KernelChange>& kernel_changes, const std::string& target) {
  std::vector<Knob> knobs;
  auto add = [&](const std::string& setting, const std::string& value, const std::string& reason, int rank) {
    const auto* spec = find_setting(setting);
    if (!spec || !applies_to(*spec, cell.device) || !is_valid_value(*spec, value)) return;
    if (spec->py_cells_only && !(cell.model && is_python_model(*cell.model))) return;
    // A cell's rank count is what it computes (a collective's world size, in its key; 1 for every other
    // probe, which 2 or more would run as a collective): never a knob that explains other bits.
    if (spec->portability == PortabilityRole::ranks) return;
    const auto current = cell.settings.find(setting);
    if ((current != cell.settings.end() && current->second == value) || has_knob(knobs, setting, value)) return;
    knobs.push_back({setting, value, reason, rank});
  };
  // First what the environment diff points at: the other side's variables and ATen capability.
  const auto& other_variables = other.is_object() ? other.value("numerics_environment", json()) : json();
  const auto& here_variables = options.here.is_object() ? options.here.value("numerics_environment", json()) : json();
  for (const auto& spec : setting_specs()) {
    if (spec.environment_variable.empty() || !other_variables.is_object()) continue;
    const auto theirs = text_at(other_variables, spec.environment_variable.c_str());
    const auto ours = text_at(here_variables, spec.environment_variable.c_str());
    if (!theirs.empty() && theirs != ours)
      add(spec.name, spec.name == "cpu_capability" ? lower(theirs) : theirs,
          fmt::format("the other side ran with {}={}", spec.environment_variable, theirs), 0);
    else if (theirs.empty() && !ours.empty())
      add(spec.name, spec.removed_by.empty() ? kUnset : spec.removed_by,
          fmt::format("the other side ran without {}", spec.environment_variable), 0);
  }
  const auto capability = lower(text_at(other, "aten_cpu_capability"));
  if (!capability.empty() && capability != lower(text_at(options.here, "aten_cpu_capability")))
    add("cpu_capability", capability, fmt::format("the other side's ATen capability was {}", capability), 0);
  // Then the settings the changed kernels' libraries key on: first, for every change, the target side's
  // ISA where the kernels name it (rank 0; before any rank-1 value, which would take its place), then
  // the settings' other values (rank 1).
  for (const int rank : {0, 1})
    for (const auto& change : kernel_changes) {
      const auto reason = fmt::format("{}'s kernels changed ({})", change.library, kernel_change_text(change));
      for (const auto& setting : library_settings(change.library)) {
        const auto* spec = find_setting(setting);
        if (!spec || !applies_to(*spec, cell.device)) continue;
        if (rank == 0)
          add(setting, isa_setting_value(setting, target == "before" ? change.before : change.after), reason, 0);
        else
          for (const auto& value : table_values(*spec, cell, other, options)) add(setting, value, reason, 1);
      }
    }
  // Then every other value of every setting that applies here, but the libraries' ISA caps: a cap is
  // tried where the other side's variable or its library's changed kernels point at it (above), never
  // blindly (their 24 values would be most of the table, and of its pairs).
  for (const auto& spec : setting_specs()) {
    if (spec.name == "seed" || !applies_to(spec, cell.device) || spec.name == "onednn_max_cpu_isa" ||
        spec.name == "mkl_enable_instructions")
      continue;
    for (const auto& value : table_values(spec, cell, other, options)) add(spec.name, value, kSettingsTable, 2);
  }
  return knobs;
}

}  // namespace repro_audit
