#include "fleet/fleet_matrix.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "compare/platform.h"

namespace repro_audit {
namespace {

// The fields tried first when naming what separates hosts: what a platform team changes.
const std::vector<std::string> kPriority = {
    "GPU", "CUDA driver", "CUDA runtime", "cuDNN", "torch", "ATen capability", "CPU flags", "CPU", "CPU id"};

std::vector<std::pair<std::string, std::string>> platform_fields(const nlohmann::json& environment) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& field : fingerprint_fields(environment)) {
    if (!field.counts_for_platform) continue;
    auto value = field.value;
    if (field.is_set) {  // a set: its members in order, so two orders are one platform
      auto members = field.members;
      std::sort(members.begin(), members.end());
      value = fmt::format("{}", fmt::join(members, " "));
    }
    fields.emplace_back(field.label, value);
  }
  return fields;
}

std::string field_value(const std::vector<std::pair<std::string, std::string>>& fields, const std::string& label) {
  for (const auto& [name, value] : fields)
    if (name == label) return value;
  return "";
}

std::string platform_summary_text(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<std::string> parts;
  const auto gpu = field_value(fields, "GPU");
  parts.push_back(gpu.empty() || gpu == "none" ? field_value(fields, "CPU") : gpu);
  for (const auto& [label, prefix] : std::vector<std::pair<std::string, std::string>>{{"CUDA driver", "driver "},
                                                                                      {"CUDA runtime", "CUDA "},
                                                                                      {"cuDNN", "cuDNN "},
                                                                                      {"torch", "torch "},
                                                                                      {"ATen capability", ""}})
    if (const auto value = field_value(fields, label); !value.empty() && value != "none" && value != "0")
      parts.push_back(prefix + value);
  std::erase(parts, std::string());
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<FleetHost> name_hosts(const std::vector<FleetInput>& inputs) {
  std::vector<FleetHost> hosts;
  std::map<std::string, int> uses;
  for (const auto& input : inputs) {
    auto name = input.report.host.empty() ? std::filesystem::path(input.file).stem().string() : input.report.host;
    ++uses[name];
    hosts.push_back({name, input.file, 0});
  }
  for (auto& host : hosts)
    if (uses[host.name] > 1) host.name = fmt::format("{} ({})", host.name, host.file);
  return hosts;
}

FleetEntry entry_of(const CellReport& cell) {
  const auto& v = cell.verdict;
  if (runs_agreed(v.kind) && !v.digest.empty()) return {"digest", v.digest, -1};
  return {to_string(v.kind), "", -1};
}

// Does `label` separate the groups: equal values always in one group (refines), and one value per
// group too (exact)?
struct Separation {
  bool refines = false;
  bool exact = false;
};

Separation separates(const FleetCell& cell, const std::vector<std::vector<std::pair<std::string, std::string>>>& fields,
                     const std::vector<FleetHost>& hosts, const std::string& label) {
  std::map<std::string, std::set<int>> groups_of_value;
  std::map<int, std::set<std::string>> values_of_group;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const auto& entry = cell.entries[h];
    if (entry.group < 0) continue;
    const auto value = field_value(fields[static_cast<std::size_t>(hosts[h].platform)], label);
    groups_of_value[value].insert(entry.group);
    values_of_group[entry.group].insert(value);
  }
  Separation result;
  result.refines = std::all_of(groups_of_value.begin(), groups_of_value.end(),
                               [](const auto& item) { return item.second.size() == 1; });
  result.exact = result.refines && std::all_of(values_of_group.begin(), values_of_group.end(),
                                               [](const auto& item) { return item.second.size() == 1; });
  return result;
}

void explain_split(FleetCell& cell, const FleetMatrix& fleet,
                   const std::vector<std::vector<std::pair<std::string, std::string>>>& fields) {
  std::vector<std::string> labels = kPriority;
  for (const auto& [label, value] : fleet.platforms.front().fields)
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
  std::string refining;
  for (const auto& label : labels) {
    const auto separation = separates(cell, fields, fleet.hosts, label);
    if (separation.exact) {
      cell.field = label;
      cell.exact = true;
      cell.separation = "differs exactly where " + label + " differs";
      return;
    }
    if (separation.refines && refining.empty()) refining = label;
  }
  if (!refining.empty()) {
    cell.field = refining;
    cell.separation = "differs only where " + refining + " differs (not everywhere it does)";
    return;
  }
  // Hosts of one platform disagree: no fingerprint field can say why.
  for (std::size_t a = 0; a < fleet.hosts.size(); ++a)
    for (std::size_t b = a + 1; b < fleet.hosts.size(); ++b)
      if (fleet.hosts[a].platform == fleet.hosts[b].platform && cell.entries[a].group >= 0 &&
          cell.entries[b].group >= 0 && cell.entries[a].group != cell.entries[b].group) {
        cell.separation = fmt::format("no fingerprint field explains it: {} and {} share a platform and differ",
                                      fleet.hosts[a].name, fleet.hosts[b].name);
        return;
      }
  cell.separation = "no single fingerprint field separates the groups";
}

}  // namespace

const char* to_string(FleetCategory category) {
  switch (category) {
    case FleetCategory::portable:
      return "portable";
    case FleetCategory::split:
      return "split";
    case FleetCategory::nondeterministic:
      return "nondeterministic";
    case FleetCategory::not_comparable:
      return "not-comparable";
  }
  return "?";
}

FleetMatrix build_fleet(const std::vector<FleetInput>& inputs) {
  FleetMatrix fleet;
  fleet.hosts = name_hosts(inputs);
  std::map<std::vector<std::pair<std::string, std::string>>, int> platform_of;
  std::vector<std::vector<std::pair<std::string, std::string>>> fields;
  for (std::size_t h = 0; h < inputs.size(); ++h) {
    auto host_fields = platform_fields(inputs[h].report.environment);
    const auto [it, added] = platform_of.emplace(host_fields, static_cast<int>(fleet.platforms.size()));
    if (added) {
      fleet.platforms.push_back(
          {fmt::format("P{}", fleet.platforms.size() + 1), platform_summary_text(host_fields), host_fields, {}});
      fields.push_back(host_fields);
    }
    fleet.hosts[h].platform = it->second;
    fleet.platforms[static_cast<std::size_t>(it->second)].hosts.push_back(static_cast<int>(h));
  }

  std::map<std::string, std::size_t> row_of;
  for (std::size_t h = 0; h < inputs.size(); ++h)
    for (const auto& cell : inputs[h].report.cells) {
      auto [it, added] = row_of.emplace(cell.cell.key, fleet.cells.size());
      if (added) fleet.cells.push_back({cell.cell.key, std::vector<FleetEntry>(inputs.size(), {"absent", "", -1})});
      fleet.cells[it->second].entries[h] = entry_of(cell);
    }

  for (auto& cell : fleet.cells) {
    std::map<std::string, int> hosts_per_digest;
    bool racy = false;
    for (const auto& entry : cell.entries) {
      if (entry.state != "absent") ++cell.hosts_with_cell;
      if (entry.state == "digest") ++hosts_per_digest[entry.digest];
      racy = racy || entry.state == "nondeterministic";
    }
    // Groups numbered by size, largest first (then by digest): the majority is group A.
    std::vector<std::pair<int, std::string>> order;
    for (const auto& [digest, count] : hosts_per_digest) order.emplace_back(-count, digest);
    std::sort(order.begin(), order.end());
    std::map<std::string, int> group_of;
    for (std::size_t g = 0; g < order.size(); ++g) group_of[order[g].second] = static_cast<int>(g);
    for (auto& entry : cell.entries)
      if (entry.state == "digest") entry.group = group_of[entry.digest];
    cell.groups = static_cast<int>(order.size());
    int agreeing = 0;
    for (const auto& [digest, count] : hosts_per_digest) agreeing += count;
    if (agreeing >= 2 || (agreeing >= 1 && racy)) ++fleet.compared;
    if (racy)
      cell.category = FleetCategory::nondeterministic;
    else if (agreeing < 2)
      cell.category = FleetCategory::not_comparable;
    else if (cell.groups == 1 && agreeing == cell.hosts_with_cell)
      cell.category = FleetCategory::portable;
    else if (cell.groups == 1)
      cell.category = FleetCategory::not_comparable;  // the others failed or were skipped
    else
      cell.category = FleetCategory::split;
    if (cell.category == FleetCategory::split) explain_split(cell, fleet, fields);
    if (cell.category == FleetCategory::nondeterministic) {
      std::vector<std::string> where;
      for (std::size_t h = 0; h < cell.entries.size(); ++h)
        if (cell.entries[h].state == "nondeterministic") where.push_back(fleet.hosts[h].name);
      cell.separation = fmt::format("runs disagree on {}", fmt::join(where, ", "));
    }
  }
  return fleet;
}

std::vector<std::string> fleet_summary(const FleetMatrix& fleet) {
  int portable = 0, racy = 0, other = 0;
  std::map<std::string, int> split_by;
  int unexplained = 0;
  for (const auto& cell : fleet.cells) {
    switch (cell.category) {
      case FleetCategory::portable:
        ++portable;
        break;
      case FleetCategory::nondeterministic:
        ++racy;
        break;
      case FleetCategory::not_comparable:
        ++other;
        break;
      case FleetCategory::split:
        if (cell.field.empty())
          ++unexplained;
        else
          ++split_by[cell.field];
        break;
    }
  }
  std::vector<std::string> lines = {fmt::format("{} cells portable fleet-wide", portable)};
  std::vector<std::pair<int, std::string>> splits;
  for (const auto& [field, count] : split_by) splits.emplace_back(-count, field);
  std::sort(splits.begin(), splits.end());
  for (const auto& [count, field] : splits) lines.push_back(fmt::format("{} split by {}", -count, field));
  if (unexplained > 0) lines.push_back(fmt::format("{} split where no fingerprint field differs", unexplained));
  lines.push_back(fmt::format("{} nondeterministic on some host", racy));
  lines.push_back(fmt::format("{} not comparable (fewer than 2 hosts with agreeing runs)", other));
  return lines;
}

}  // namespace repro_audit
