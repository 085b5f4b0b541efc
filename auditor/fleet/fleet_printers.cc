#include "fleet/fleet_printers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "report/escape.h"

namespace repro_audit {
namespace {

std::string hosts_text(std::size_t count) { return fmt::format("{} host{}", count, count == 1 ? "" : "s"); }

// "raises on c1, c2; error on b1": the hosts that ran the cell and have no bits, by state.
std::string failures_text(const FleetMatrix& fleet, const FleetCell& cell) {
  std::map<std::string, std::vector<std::string>> hosts_of_state;
  for (const auto h : fleet_columns(fleet)) {
    const auto& state = cell.entries[h].state;
    if (state != "digest" && state != "absent" && state != "nondeterministic" && state != "unsupported")
      hosts_of_state[state].push_back(fleet.hosts[h].name);
  }
  std::vector<std::string> parts;
  for (const auto& [state, hosts] : hosts_of_state)
    parts.push_back(fmt::format("{} on {}", state, fmt::join(hosts, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// "; 1 host lacks it, skipped on 2 hosts", or "".
std::string lacking_text(const FleetMatrix& fleet, const FleetCell& cell) {
  std::vector<std::string> parts;
  if (const auto missing = fleet.hosts.size() - static_cast<std::size_t>(cell.hosts_with_cell); missing > 0)
    parts.push_back(fmt::format("{} {}", hosts_text(missing), missing == 1 ? "lacks it" : "lack it"));
  if (cell.hosts_skipped > 0) parts.push_back("skipped on " + hosts_text(static_cast<std::size_t>(cell.hosts_skipped)));
  return parts.empty() ? "" : fmt::format("; {}", fmt::join(parts, ", "));
}

std::size_t hosts_with_bits(const FleetCell& cell) {
  return static_cast<std::size_t>(std::count_if(cell.entries.begin(), cell.entries.end(),
                                                [](const auto& entry) { return entry.state == "digest"; }));
}

}  // namespace

std::string fleet_group_name(int group) {
  std::string name;
  for (int n = group + 1; n > 0; n = (n - 1) / 26) name.insert(name.begin(), static_cast<char>('A' + (n - 1) % 26));
  return name;
}

std::string fleet_mark(const FleetEntry& entry) {
  if (entry.state == "digest") return fleet_group_name(entry.group);
  if (entry.state == "absent") return "-";
  if (entry.state == "nondeterministic") return "ND";
  if (entry.state == "unsupported") return "skip";
  return entry.state;  // raises, warns, error, crashed, timeout
}

std::string fleet_verdict_text(const FleetMatrix& fleet, const FleetCell& cell) {
  const auto failures = failures_text(fleet, cell);
  switch (cell.category) {
    case FleetCategory::portable:
      return fmt::format("portable: same bits on {}{}", hosts_text(hosts_with_bits(cell)), lacking_text(fleet, cell));
    case FleetCategory::split:
      return fmt::format("{} group{}{}: {}{}", cell.groups, cell.groups == 1 ? "" : "s",
                         failures.empty() ? "" : ", " + failures, cell.separation, lacking_text(fleet, cell));
    case FleetCategory::nondeterministic:
      return fmt::format("nondeterministic: {}{}{}", cell.separation, failures.empty() ? "" : "; " + failures,
                         lacking_text(fleet, cell));
    case FleetCategory::not_comparable:
      return fmt::format("not comparable: bits from {}{}{}", hosts_text(hosts_with_bits(cell)),
                         failures.empty() ? "" : "; " + failures, lacking_text(fleet, cell));
  }
  return "";
}

std::vector<std::size_t> fleet_columns(const FleetMatrix& fleet) {
  std::vector<std::size_t> columns;
  for (const auto& platform : fleet.platforms)
    for (const int host : platform.hosts) columns.push_back(static_cast<std::size_t>(host));
  return columns;
}

std::string fleet_text(const FleetMatrix& fleet) {
  std::string out = fmt::format("Fleet: {} hosts on {} platforms, {} cells\n", fleet.hosts.size(),
                                fleet.platforms.size(), fleet.cells.size());
  for (const auto& line : fleet_summary(fleet)) out += "  " + line + "\n";
  out += "\nPlatforms:\n";
  for (const auto& platform : fleet.platforms) {
    std::vector<std::string> names;
    for (const int host : platform.hosts) names.push_back(fleet.hosts[static_cast<std::size_t>(host)].name);
    out += fmt::format("  {}  {}: {}\n", platform.label, platform.summary, fmt::join(names, ", "));
  }
  // Columns platform by platform, each as wide as its host's name, platform label and marks.
  const auto columns = fleet_columns(fleet);
  std::size_t key_width = 4;
  for (const auto& cell : fleet.cells) key_width = std::max(key_width, cell.key.size());
  std::vector<std::size_t> widths;
  std::string platform_line = fmt::format("{:<{}}", "", key_width),
              host_line = fmt::format("{:<{}}", "cell", key_width);
  int previous_platform = -1;
  for (const auto h : columns) {
    const auto& host = fleet.hosts[h];
    const auto& label = fleet.platforms[static_cast<std::size_t>(host.platform)].label;
    auto width = std::max(host.name.size(), label.size());
    for (const auto& cell : fleet.cells) width = std::max(width, fleet_mark(cell.entries[h]).size());
    widths.push_back(width);
    platform_line += fmt::format("  {:<{}}", host.platform == previous_platform ? "" : label, width);
    host_line += fmt::format("  {:<{}}", host.name, width);
    previous_platform = host.platform;
  }
  platform_line.erase(platform_line.find_last_not_of(' ') + 1);
  out += "\n" + platform_line + "\n" + host_line + "  across the fleet\n";
  for (const auto& cell : fleet.cells) {
    out += fmt::format("{:<{}}", cell.key, key_width);
    for (std::size_t c = 0; c < columns.size(); ++c)
      out += fmt::format("  {:<{}}", fleet_mark(cell.entries[columns[c]]), widths[c]);
    out += "  " + fleet_verdict_text(fleet, cell) + "\n";
  }
  out +=
      "\nA, B, ...: hosts with one letter have the same bits (A: the most hosts); ND: runs disagree on that host; "
      "skip: unsupported there; -: not run there\n";
  return out;
}

std::string fleet_markdown(const FleetMatrix& fleet) {
  std::string out = fmt::format("# Fleet matrix\n\n{} hosts on {} platforms, {} cells.\n\n", fleet.hosts.size(),
                                fleet.platforms.size(), fleet.cells.size());
  for (const auto& line : fleet_summary(fleet)) out += "- " + markdown_text(line) + "\n";
  out += "\n| platform | fingerprint | hosts |\n|---|---|---|\n";
  for (const auto& platform : fleet.platforms) {
    std::vector<std::string> names;
    for (const int host : platform.hosts)
      names.push_back(markdown_text(fleet.hosts[static_cast<std::size_t>(host)].name));
    out += fmt::format("| {} | {} | {} |\n", platform.label, markdown_text(platform.summary), fmt::join(names, ", "));
  }
  const auto columns = fleet_columns(fleet);
  out += "\n| cell |";
  for (const auto h : columns) out.append(" ").append(markdown_text(fleet.hosts[h].name)).append(" |");
  out += " across the fleet |\n|---|";
  for (std::size_t c = 0; c < columns.size(); ++c) out += "---|";
  out += "---|\n";
  for (const auto& cell : fleet.cells) {
    out.append("| ").append(markdown_code(cell.key, true)).append(" |");
    for (const auto h : columns) out.append(" ").append(markdown_text(fleet_mark(cell.entries[h]))).append(" |");
    out.append(" ").append(markdown_text(fleet_verdict_text(fleet, cell))).append(" |\n");
  }
  out +=
      "\nA, B, ...: hosts with one letter have the same bits (A: the most hosts); ND: runs disagree on that host; "
      "skip: unsupported there; -: not run there.\n";
  return out;
}

nlohmann::json fleet_json(const FleetMatrix& fleet) {
  using nlohmann::json;
  json j = {{"schema", kFleetSchema},          {"hosts", json::array()},     {"platforms", json::array()},
            {"summary", fleet_summary(fleet)}, {"compared", fleet.compared}, {"cells", json::array()}};
  if (!fleet.duplicates.empty()) {  // absent when every report is a host of its own
    j["duplicates"] = json::array();
    for (const auto& duplicate : fleet.duplicates)
      j["duplicates"].push_back({{"file", duplicate.file}, {"same_as", duplicate.same_as}, {"why", duplicate.why}});
  }
  for (const auto& host : fleet.hosts)
    j["hosts"].push_back({{"name", host.name},
                          {"file", host.file},
                          {"platform", fleet.platforms[static_cast<std::size_t>(host.platform)].label}});
  for (const auto& platform : fleet.platforms) {
    json fields = json::object();
    for (const auto& [label, value] : platform.fields) fields[label] = value;
    json hosts = json::array();
    for (const int host : platform.hosts) hosts.push_back(fleet.hosts[static_cast<std::size_t>(host)].name);
    j["platforms"].push_back(
        {{"label", platform.label}, {"summary", platform.summary}, {"fields", fields}, {"hosts", hosts}});
  }
  for (const auto& cell : fleet.cells) {
    json groups = json::array();
    for (int g = 0; g < cell.groups; ++g) {
      json group = {{"name", fleet_group_name(g)}, {"digest", ""}, {"hosts", json::array()}};
      for (std::size_t h = 0; h < fleet.hosts.size(); ++h)
        if (cell.entries[h].group == g) {
          group["digest"] = cell.entries[h].digest;
          group["hosts"].push_back(fleet.hosts[h].name);
        }
      groups.push_back(group);
    }
    json states = json::object();
    for (std::size_t h = 0; h < fleet.hosts.size(); ++h)
      states[fleet.hosts[h].name] =
          cell.entries[h].state == "digest" ? fleet_group_name(cell.entries[h].group) : cell.entries[h].state;
    json row = {{"key", cell.key},
                {"category", to_string(cell.category)},
                {"portable", cell.category == FleetCategory::portable},
                {"hosts_with_cell", cell.hosts_with_cell},
                {"hosts_without_cell", static_cast<int>(fleet.hosts.size()) - cell.hosts_with_cell},
                {"hosts_skipped", cell.hosts_skipped},
                {"groups", groups},
                {"hosts", states},
                {"text", fleet_verdict_text(fleet, cell)}};
    if (!cell.field.empty()) {
      row["field"] = cell.field;
      row["exact"] = cell.exact;
    }
    if (!cell.separation.empty()) row["separation"] = cell.separation;
    j["cells"].push_back(row);
  }
  return j;
}

}  // namespace repro_audit
