#include "fleet/fleet_printers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/escape.h"
#include "report/html_page.h"

namespace repro_audit {
namespace {

// "A", "B", ... "Z", "AA": a digest group's name.
std::string group_name(int group) {
  std::string name;
  for (int n = group + 1; n > 0; n = (n - 1) / 26) name.insert(name.begin(), static_cast<char>('A' + (n - 1) % 26));
  return name;
}

// One host's result in a matrix cell: its group, or what happened instead.
std::string mark(const FleetEntry& entry) {
  if (entry.state == "digest") return group_name(entry.group);
  if (entry.state == "absent") return "-";
  if (entry.state == "nondeterministic") return "ND";
  if (entry.state == "unsupported") return "skip";
  return entry.state;  // raises, warns, error, crashed, timeout
}

std::string verdict_text(const FleetCell& cell) {
  switch (cell.category) {
    case FleetCategory::portable:
      return fmt::format("portable ({} hosts)", cell.hosts_with_cell);
    case FleetCategory::split:
      return fmt::format("{} groups: {}", cell.groups, cell.separation);
    case FleetCategory::nondeterministic:
      return "nondeterministic: " + cell.separation;
    case FleetCategory::not_comparable:
      return "not comparable";
  }
  return "";
}

}  // namespace

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
  std::size_t key_width = 4;
  for (const auto& cell : fleet.cells) key_width = std::max(key_width, cell.key.size());
  out += fmt::format("\n{:<{}}", "cell", key_width);
  for (const auto& host : fleet.hosts) out += fmt::format("  {}", host.name);
  out += "\n";
  for (const auto& cell : fleet.cells) {
    out += fmt::format("{:<{}}", cell.key, key_width);
    for (std::size_t h = 0; h < fleet.hosts.size(); ++h)
      out += fmt::format("  {:<{}}", mark(cell.entries[h]), fleet.hosts[h].name.size());
    out += "  " + verdict_text(cell) + "\n";
  }
  out +=
      "\nA, B, ...: hosts with the same letter have the same bits; ND: runs disagree on that host; -: not run "
      "there\n";
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
  out += "\n| cell |";
  for (const auto& host : fleet.hosts) out += " " + markdown_text(host.name) + " |";
  out += " fleet |\n|---|";
  for (std::size_t h = 0; h < fleet.hosts.size(); ++h) out += "---|";
  out += "---|\n";
  for (const auto& cell : fleet.cells) {
    out += "| " + markdown_code(cell.key, true) + " |";
    for (const auto& entry : cell.entries) out += " " + markdown_text(mark(entry)) + " |";
    out += " " + markdown_text(verdict_text(cell)) + " |\n";
  }
  return out;
}

nlohmann::json fleet_json(const FleetMatrix& fleet) {
  using nlohmann::json;
  json j = {{"schema", kFleetSchema},          {"hosts", json::array()},     {"platforms", json::array()},
            {"summary", fleet_summary(fleet)}, {"compared", fleet.compared}, {"cells", json::array()}};
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
      json group = {{"name", group_name(g)}, {"digest", ""}, {"hosts", json::array()}};
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
          cell.entries[h].state == "digest" ? group_name(cell.entries[h].group) : cell.entries[h].state;
    json row = {{"key", cell.key},
                {"category", to_string(cell.category)},
                {"portable", cell.category == FleetCategory::portable},
                {"hosts_with_cell", cell.hosts_with_cell},
                {"groups", groups},
                {"hosts", states}};
    if (!cell.field.empty()) {
      row["field"] = cell.field;
      row["exact"] = cell.exact;
    }
    if (!cell.separation.empty()) row["separation"] = cell.separation;
    j["cells"].push_back(row);
  }
  return j;
}

std::string fleet_html(const FleetMatrix& fleet) {
  std::string body = "<h1>Fleet matrix</h1>\n";
  body += fmt::format("<p>{} hosts on {} platforms, {} cells.</p>\n<ul class=\"summary\">\n", fleet.hosts.size(),
                      fleet.platforms.size(), fleet.cells.size());
  for (const auto& line : fleet_summary(fleet)) body += "<li>" + xml_escape(line) + "</li>\n";
  body += "</ul>\n<table class=\"fleet\">\n<thead><tr><th rowspan=\"2\">cell</th>";
  // Hosts grouped by platform: one header cell per platform over its hosts.
  std::vector<std::size_t> columns;
  for (const auto& platform : fleet.platforms) {
    body += fmt::format("<th class=\"platform\" colspan=\"{}\" title=\"{}\">{}</th>", platform.hosts.size(),
                        xml_escape(platform.summary), xml_escape(platform.label + ": " + platform.summary));
    for (const int host : platform.hosts) columns.push_back(static_cast<std::size_t>(host));
  }
  body += "<th rowspan=\"2\">across the fleet</th></tr>\n<tr>";
  for (const auto host : columns) body += "<th class=\"host\">" + xml_escape(fleet.hosts[host].name) + "</th>";
  body += "</tr></thead>\n<tbody>\n";
  for (const auto& cell : fleet.cells) {
    body += fmt::format("<tr class=\"{}\"><td class=\"key\">{}</td>", to_string(cell.category), xml_escape(cell.key));
    for (const auto host : columns) {
      const auto& entry = cell.entries[host];
      const auto css = entry.state == "digest"             ? fmt::format("g{}", std::min(entry.group, 7))
                       : entry.state == "absent"           ? std::string("absent")
                       : entry.state == "nondeterministic" ? std::string("nd")
                                                           : std::string("other");
      body += fmt::format("<td class=\"{}\" title=\"{}\">{}</td>", css,
                          xml_escape(entry.digest.empty() ? entry.state : entry.digest), xml_escape(mark(entry)));
    }
    body += "<td class=\"verdict\">" + xml_escape(verdict_text(cell)) + "</td></tr>\n";
  }
  body +=
      "</tbody></table>\n<p class=\"legend\">"
      "<span class=\"g0\">A</span> <span class=\"g1\">B</span> <span class=\"g2\">C</span> hosts with one letter "
      "have the same bits (A: the most hosts) &#183; <span class=\"nd\">ND</span> runs disagree on that host "
      "&#183; <span class=\"other\">skip / raises / error</span> no bits to compare &#183; "
      "<span class=\"absent\">-</span> not run there &#183; a row with a green rule is portable fleet-wide</p>\n";
  body += "<h2>Platforms</h2>\n<table class=\"platforms\"><tr><th>platform</th><th>hosts</th>";
  const auto& labels =
      fleet.platforms.empty() ? std::vector<std::pair<std::string, std::string>>{} : fleet.platforms.front().fields;
  for (const auto& [label, value] : labels) body += "<th>" + xml_escape(label) + "</th>";
  body += "</tr>\n";
  for (const auto& platform : fleet.platforms) {
    std::vector<std::string> names;
    for (const int host : platform.hosts) names.push_back(xml_escape(fleet.hosts[static_cast<std::size_t>(host)].name));
    body += fmt::format("<tr><td>{}</td><td>{}</td>", xml_escape(platform.label), fmt::join(names, ", "));
    for (const auto& [label, value] : platform.fields) body += "<td>" + xml_escape(value) + "</td>";
    body += "</tr>\n";
  }
  body += "</table>\n";
  const std::string style =
      "table.fleet td{text-align:center;min-width:3em;padding:2px 8px}table.fleet td.key,table.fleet "
      "td.verdict{text-align:left}"
      "th.platform{background:#e8eef6}tr.portable td.key{border-left:6px solid #2e7d32}"
      "tr.split td.key{border-left:6px solid #f9a825}tr.nondeterministic td.key{border-left:6px solid #c62828}"
      ".g0{background:#a5d6a7}.g1{background:#90caf9}.g2{background:#ffcc80}.g3{background:#ce93d8}"
      ".g4{background:#80deea}.g5{background:#fff59d}.g6{background:#bcaaa4}.g7{background:#b0bec5}"
      ".nd{background:repeating-linear-gradient(45deg,#ef9a9a,#ef9a9a 4px,#fff 4px,#fff 8px);font-weight:bold}"
      ".other{background:#e0e0e0;color:#555}.absent{color:#999}"
      "p.legend span{padding:0 .4em}table.platforms td{font-size:90%}";
  return html_document("repro-audit fleet matrix", body, style);
}

}  // namespace repro_audit
