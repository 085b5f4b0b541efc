#include "fleet/fleet_matrix.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "fleet/fleet_platforms.h"
#include "hash/digest.h"

namespace repro_audit {
namespace {

// The fields tried first when naming what separates hosts: what a platform team changes.
const std::vector<std::string> kPriority = {
    "GPU", "CUDA driver", "CUDA runtime", "cuDNN", "torch", "ATen capability", "CPU flags", "CPU", "CPU id"};

const std::string kDigest = "digest", kAbsent = "absent", kNondeterministic = "nondeterministic",
                  kSkipped = to_string(VerdictKind::unsupported);

// Warn-only mode's runs agree or not by their digests, as report/portability.cc reads them.
FleetEntry entry_of(const CellReport& cell) {
  const auto& v = cell.verdict;
  const bool agreed = runs_agreed(v.kind) || (v.kind == VerdictKind::warns && v.digests_agree);
  if (agreed && !v.digest.empty()) return {kDigest, v.digest, -1};
  if (runs_diverged(v)) return {kNondeterministic, "", -1};
  return {to_string(v.kind), "", -1};
}

// What a host's result is, for telling hosts apart: its digest group, or its state when it raised or
// failed (it disagrees with every group). Empty for a host without the cell or that skipped it.
std::string class_of(const FleetEntry& entry) {
  if (entry.state == kDigest) return fmt::format("group {}", entry.group);
  if (entry.state == kAbsent || entry.state == kSkipped) return "";
  return entry.state;
}

// Does `label` separate the groups: equal values always in one group (refines), and one value per
// group too (exact)?
struct Separation {
  bool refines = false;
  bool exact = false;
};

Separation separates(const FleetCell& cell, const std::vector<PlatformFields>& fields,
                     const std::vector<FleetHost>& hosts, const std::string& label) {
  std::map<std::string, std::set<std::string>> groups_of_value;
  std::map<std::string, std::set<std::string>> values_of_group;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const auto result = class_of(cell.entries[h]);
    if (result.empty()) continue;
    const auto value = platform_value(fields[static_cast<std::size_t>(hosts[h].platform)], label);
    groups_of_value[value].insert(result);
    values_of_group[result].insert(value);
  }
  Separation result;
  result.refines = std::all_of(groups_of_value.begin(), groups_of_value.end(),
                               [](const auto& item) { return item.second.size() == 1; });
  result.exact = result.refines && std::all_of(values_of_group.begin(), values_of_group.end(),
                                               [](const auto& item) { return item.second.size() == 1; });
  return result;
}

void explain_split(FleetCell& cell, const FleetMatrix& fleet, const std::vector<PlatformFields>& fields) {
  std::vector<std::string> labels = kPriority;  // then every other platform field, as the reports list them
  for (const auto& platform : fleet.platforms)
    for (const auto& [label, value] : platform.fields)
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
      if (const auto first = class_of(cell.entries[a]), second = class_of(cell.entries[b]);
          fleet.hosts[a].platform == fleet.hosts[b].platform && !first.empty() && !second.empty() && first != second) {
        cell.separation = fmt::format("no fingerprint field explains it: {} and {} share a platform and differ",
                                      fleet.hosts[a].name, fleet.hosts[b].name);
        return;
      }
  cell.separation = "no single fingerprint field separates the groups (several differ together)";
}

// Digest groups numbered by size, largest first (then by digest): the majority is group A.
void number_groups(FleetCell& cell) {
  std::map<std::string, int> hosts_per_digest;
  for (const auto& entry : cell.entries)
    if (entry.state == kDigest) ++hosts_per_digest[entry.digest];
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [digest, count] : hosts_per_digest) order.emplace_back(-count, digest);
  std::sort(order.begin(), order.end());
  std::map<std::string, int> group_of;
  for (std::size_t g = 0; g < order.size(); ++g) group_of[order[g].second] = static_cast<int>(g);
  for (auto& entry : cell.entries)
    if (entry.state == kDigest) entry.group = group_of[entry.digest];
  cell.groups = static_cast<int>(order.size());
}

void judge_cell(FleetCell& cell, FleetMatrix& fleet, const std::vector<PlatformFields>& fields) {
  number_groups(cell);
  int with_bits = 0, racy = 0, failed = 0;
  for (const auto& entry : cell.entries) {
    if (entry.state == kAbsent) continue;
    ++cell.hosts_with_cell;
    if (entry.state == kDigest)
      ++with_bits;
    else if (entry.state == kNondeterministic)
      ++racy;
    else if (entry.state == kSkipped)
      ++cell.hosts_skipped;
    else
      ++failed;  // raised, errored, crashed, timed out: ran, and has no bits to agree with
  }
  // A cell racy on one host and reproducible on another was compared: it is not portable.
  if (with_bits >= 2 || (with_bits >= 1 && racy > 0)) ++fleet.compared;
  if (racy > 0) {
    cell.category = FleetCategory::nondeterministic;
    std::vector<std::string> where;
    for (std::size_t h = 0; h < cell.entries.size(); ++h)
      if (cell.entries[h].state == kNondeterministic) where.push_back(fleet.hosts[h].name);
    cell.separation = fmt::format("runs disagree on {}", fmt::join(where, ", "));
  } else if (with_bits < 2) {
    cell.category = FleetCategory::not_comparable;
  } else if (cell.groups == 1 && failed == 0) {
    cell.category = FleetCategory::portable;
  } else {
    cell.category = FleetCategory::split;
    explain_split(cell, fleet, fields);
  }
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

namespace {

// The reports that count as hosts, in order; the others are in `duplicates`. The same run (identical
// content once parsed, whatever the file's name) is one host. So is another audit of a host already
// given (the same non-empty host name on the same platform fields): its bits say the host is stable
// run to run, not that two machines agree, so it is named as a repeated audit and the first one is the
// host. A host name alone is not enough: two hosts of one name on different platforms are two hosts.
// A host's platform, and the scheme its inputs were made with: other inputs give other bits on any
// platform, so the scheme separates hosts like a platform field.
PlatformFields host_fields(const Report& report) {
  auto fields = platform_fields(report.environment);
  fields.emplace_back("input scheme", describe(input_scheme_of(report)));
  return fields;
}

std::vector<ReportFile> distinct_hosts(const std::vector<ReportFile>& all, std::vector<FleetDuplicate>& duplicates) {
  std::vector<ReportFile> kept;
  std::map<std::string, std::string> file_of_run;                              // content digest -> file
  std::map<std::pair<std::string, PlatformFields>, std::string> file_of_host;  // host, platform -> file
  for (const auto& input : all) {
    const auto run =
        digest_text(report_to_json(input.report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (const auto same = file_of_run.find(run); same != file_of_run.end()) {
      duplicates.push_back({input.file, same->second, "the same run"});
      continue;
    }
    file_of_run.emplace(run, input.file);
    if (!input.report.host.empty()) {
      const auto [it, added] =
          file_of_host.emplace(std::make_pair(input.report.host, host_fields(input.report)), input.file);
      if (!added) {
        duplicates.push_back({input.file, it->second, "another audit of host " + input.report.host});
        continue;
      }
    }
    kept.push_back(input);
  }
  return kept;
}

}  // namespace

FleetMatrix build_fleet(const std::vector<ReportFile>& all) {
  FleetMatrix fleet;
  const auto inputs = distinct_hosts(all, fleet.duplicates);
  fleet.hosts = name_fleet_hosts(inputs);
  std::map<PlatformFields, int> platform_of;
  std::vector<PlatformFields> fields;
  for (std::size_t h = 0; h < inputs.size(); ++h) {
    auto platform = host_fields(inputs[h].report);
    const auto [it, added] = platform_of.emplace(platform, static_cast<int>(fleet.platforms.size()));
    if (added) {
      fleet.platforms.push_back(
          {fmt::format("P{}", fleet.platforms.size() + 1), platform_summary_text(platform), platform, {}});
      fields.push_back(platform);
    }
    fleet.hosts[h].platform = it->second;
    fleet.platforms[static_cast<std::size_t>(it->second)].hosts.push_back(static_cast<int>(h));
  }

  std::map<std::string, std::size_t> row_of;
  for (std::size_t h = 0; h < inputs.size(); ++h)
    for (const auto& cell : inputs[h].report.cells) {
      auto [it, added] = row_of.emplace(cell.cell.key, fleet.cells.size());
      if (added) {
        fleet.cells.emplace_back();
        fleet.cells.back().key = cell.cell.key;
        fleet.cells.back().entries.assign(inputs.size(), {kAbsent, "", -1});
      }
      fleet.cells[it->second].entries[h] = entry_of(cell);
    }

  for (auto& cell : fleet.cells) judge_cell(cell, fleet, fields);
  return fleet;
}

namespace {

// "12 cells portable fleet-wide", "3 split by CUDA driver", ...: the counts alone.
std::vector<std::string> fleet_counts(const FleetMatrix& fleet) {
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
  std::vector<std::string> lines = {fmt::format("{} cell{} portable fleet-wide", portable, portable == 1 ? "" : "s")};
  // The most cells first; a tie in the order of kPriority.
  auto priority = [](const std::string& field) {
    return std::find(kPriority.begin(), kPriority.end(), field) - kPriority.begin();
  };
  std::vector<std::tuple<int, std::ptrdiff_t, std::string>> splits;
  for (const auto& [field, count] : split_by) splits.emplace_back(-count, priority(field), field);
  std::sort(splits.begin(), splits.end());
  for (const auto& [count, rank, field] : splits) lines.push_back(fmt::format("{} split by {}", -count, field));
  if (unexplained > 0) lines.push_back(fmt::format("{} split that no single fingerprint field explains", unexplained));
  lines.push_back(fmt::format("{} nondeterministic on some host", racy));
  lines.push_back(fmt::format("{} not comparable (fewer than 2 hosts have bits to compare)", other));
  return lines;
}

}  // namespace

std::vector<std::string> fleet_summary(const FleetMatrix& fleet) {
  std::vector<std::string> lines;
  for (const auto& duplicate : fleet.duplicates)
    lines.push_back(
        fmt::format("{} left out: {} as {} (one host counts once)", duplicate.file, duplicate.why, duplicate.same_as));
  for (auto& line : fleet_counts(fleet)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace repro_audit
