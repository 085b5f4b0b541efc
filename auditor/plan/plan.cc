#include "plan/plan.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

#include "common/user_error.h"
#include "plan/ranks.h"

namespace repro_audit {
namespace {

using Assignment = std::vector<std::pair<std::string, std::string>>;

// Every combination of the axes' values, in axis-name order.
std::vector<Assignment> product(const std::map<std::string, std::vector<std::string>>& axes) {
  std::vector<Assignment> result = {{}};
  for (const auto& [name, values] : axes) {
    std::vector<Assignment> next;
    for (const auto& partial : result)
      for (const auto& value : values) {
        auto extended = partial;
        extended.emplace_back(name, value);
        next.push_back(std::move(extended));
      }
    result = std::move(next);
  }
  return result;
}

std::vector<FlagSetColumn> make_columns(const Config& config, const std::string& device) {
  std::vector<FlagSetColumn> columns;
  std::set<std::string> seen;
  auto add = [&](const std::string& prefix, const FlagSet& base, const Assignment& assignment) {
    FlagSet overrides = base;
    overrides.emplace("seed", std::to_string(config.seed));
    std::vector<std::string> parts;
    if (!prefix.empty()) parts.push_back(prefix);
    for (const auto& [name, value] : assignment) {
      overrides[name] = value;
      if (applies_to(*find_setting(name), device)) parts.push_back(name + "=" + value);
    }
    auto flags = make_flag_set(overrides, device);
    if (!seen.insert(canonical_settings(flags)).second) return;  // collapsed onto an earlier flag set
    columns.push_back({fmt::format("{}", fmt::join(parts, " ")), std::move(flags)});
  };
  const auto assignments = product(config.axes);
  if (config.full_matrix) {
    for (const auto& assignment : assignments) add("", {}, assignment);
  } else {
    for (const auto& profile : config.profiles)
      for (const auto& assignment : assignments) add(profile, profiles().at(profile), assignment);
  }
  return columns;
}

// Collective probes run in the columns whose `ranks` is 2 or more, every other probe in those where it
// is 1. When no column has ranks for the collectives, each column gains ranks 2, 3 and 4 for them.
void add_rank_columns(std::vector<FlagSetColumn>& columns, const std::string& device) {
  std::vector<FlagSetColumn> added;
  for (const auto& column : columns) {
    if (ranks_of(column.flags) >= 2) return;
    for (const int ranks : kDefaultRanks) {
      auto flags = column.flags;
      flags["ranks"] = std::to_string(ranks);
      added.push_back({fmt::format("{}{}ranks={}", column.label, column.label.empty() ? "" : " ", ranks),
                       make_flag_set(flags, device)});
    }
  }
  columns.insert(columns.end(), added.begin(), added.end());
}

// An invariance probe documented deterministic on the device: deterministic algorithms change none of its
// kernels there (the switch then only fills fresh memory with NaN, which a correct kernel overwrites), so
// its batch or layout answer under a strict flag set is the one without. That cell is left out when the
// same flag set without the switch is a column: it would repeat that column's runs (on the CPU, 4 of the
// invariance suite's 6 default columns).
bool repeats_the_column_without_strict(const ProbeInfo& probe, const VariantInfo& variant, const std::string& kind,
                                       const FlagSet& flags, const std::vector<FlagSetColumn>& columns) {
  if (probe.invariance == Invariance::none || probe.documented_on(variant.name, kind) != Documented::deterministic)
    return false;
  const auto it = flags.find("deterministic_algorithms");
  if (it == flags.end() || it->second == "off") return false;
  auto without = flags;
  without["deterministic_algorithms"] = "off";
  const auto wanted = canonical_settings(without);
  return std::any_of(columns.begin(), columns.end(),
                     [&](const FlagSetColumn& column) { return canonical_settings(column.flags) == wanted; });
}

// Whether `flags` move a setting of the kind `kind` marks (py_cells_only, compiled_only) off its default.
bool sets_off_default(const FlagSet& flags, bool SettingSpec::*kind) {
  return std::any_of(flags.begin(), flags.end(), [kind](const auto& flag) {
    const auto* spec = find_setting(flag.first);
    return spec && spec->*kind && flag.second != spec->default_value && flag.second != kNotApplicable;
  });
}

// torch.compile and Inductor's switches reach a py cell's callable only: other cells skip those columns.
bool sets_a_py_only_switch(const FlagSet& flags) { return sets_off_default(flags, &SettingSpec::py_cells_only); }

// Inductor's switches change nothing of an eager run.
bool inductor_switch_without_compile(const FlagSet& flags) {
  return !compiles(flags) && sets_off_default(flags, &SettingSpec::compiled_only);
}

}  // namespace

Plan make_plan(const Config& config, const Catalogue& catalogue, const std::string& device) {
  Plan plan;
  plan.device = device;
  plan.columns = make_columns(config, device);
  const auto models = catalogue_with_models({}, config.models);
  std::vector<ProbeSelection> selections = config.probes;
  const bool default_suite = selections.empty() && config.models.empty();
  if (!config.models.empty()) {
    selections.clear();
    for (const auto& model : config.models) selections.push_back({model_probe_name(model), {}});
  } else if (selections.empty())
    for (const auto& probe : catalogue)
      if (probe.in_default_suite && is_of_kind(probe, config.kind)) selections.push_back({probe.name, {}});
  const auto kind = device_kind(device);
  const auto probe_of = [&](const ProbeSelection& selection) {
    return find_probe(config.models.empty() ? catalogue : models, selection.probe);
  };
  // Rank columns are added only when no axis names ranks: an axis the user gave is audited as given.
  if (!config.axes.count("ranks") &&
      std::any_of(selections.begin(), selections.end(), [&](const auto& s) { return probe_of(s)->collective; }))
    add_rank_columns(plan.columns, device);
  std::set<std::string> keys;
  for (const auto& selection : selections) {
    const auto* probe = probe_of(selection);
    const auto& columns = plan.columns;
    if (!probe->collective &&
        std::none_of(columns.begin(), columns.end(), [](const auto& column) { return ranks_of(column.flags) == 1; }))
      throw UserError(
          fmt::format("probe '{}' is not a collective, and every flag set has ranks of 2 or more: add "
                      "ranks=1 to the values, or select collective probes only",
                      probe->name));
    if (probe->collective &&
        std::none_of(columns.begin(), columns.end(), [](const auto& column) { return ranks_of(column.flags) >= 2; }))
      throw UserError(
          fmt::format("probe '{}' is a collective, and no flag set has ranks of 2 or more: add ranks=2 (or more) "
                      "to the values, or leave the ranks axis out for ranks 2, 3 and 4",
                      probe->name));
    const ModelSpec* model = nullptr;
    for (const auto& candidate : config.models)
      if (model_probe_name(candidate) == selection.probe) model = &candidate;
    for (const auto& variant : probe->variants) {
      if (!selection.variants.empty() &&
          std::find(selection.variants.begin(), selection.variants.end(), variant.name) == selection.variants.end())
        continue;
      if (default_suite && !variant.in_default_suite_on(kind)) continue;
      const bool supported = std::find(variant.devices.begin(), variant.devices.end(), kind) != variant.devices.end();
      for (const auto& column : plan.columns) {
        if (probe->collective != (ranks_of(column.flags) >= 2)) continue;
        if (!(model && is_python_model(*model)) && sets_a_py_only_switch(column.flags)) continue;
        if (inductor_switch_without_compile(column.flags)) continue;  // the eager cell again
        if (repeats_the_column_without_strict(*probe, variant, kind, column.flags, plan.columns)) continue;
        Cell cell{cell_key(probe->name, variant.name, device, column.flags),
                  probe->name,
                  variant.name,
                  device,
                  column.label,
                  column.flags,
                  "",
                  config.timeout_seconds > 0 ? config.timeout_seconds : probe->timeout_seconds,
                  probe->invariance,
                  model ? std::optional<ModelSpec>(*model) : std::nullopt};
        if (!supported)
          cell.unsupported_reason = variant.unsupported_reason.empty() ? fmt::format("no implementation on {}", kind)
                                                                       : variant.unsupported_reason;
        if (keys.insert(cell.key).second) plan.cells.push_back(std::move(cell));
      }
    }
  }
  // Columns no probe took (the plain flag sets of an audit of collectives only) are not shown.
  std::set<std::string> used;
  for (const auto& cell : plan.cells) used.insert(cell.label);
  std::erase_if(plan.columns, [&](const FlagSetColumn& column) { return !used.count(column.label); });
  return plan;
}

std::vector<Batch> make_batches(const std::vector<Cell>& cells) {
  std::vector<Batch> batches;
  for (const auto& cell : cells) {
    if (!cell.unsupported_reason.empty()) continue;
    const auto process = process_settings(cell.settings);
    auto it = std::find_if(batches.begin(), batches.end(),
                           [&](const Batch& batch) { return batch.process_settings == process; });
    if (it == batches.end()) it = batches.insert(batches.end(), Batch{process, {}});
    it->cells.push_back(cell);
  }
  return batches;
}

}  // namespace repro_audit
