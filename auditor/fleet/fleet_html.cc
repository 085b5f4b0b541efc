// The fleet heatmap: one self-contained page (report/html_page.h: inline CSS, no script, nothing
// fetched). A row is a cell, a column a host under its platform; the colour is the host's digest group
// in that row, so a row of one colour agrees fleet-wide.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "fleet/fleet_platforms.h"
#include "fleet/fleet_printers.h"
#include "report/escape.h"
#include "report/html_page.h"

namespace repro_audit {
namespace {

// Portable rows are green; the groups of a split row take these colours, none of them green, so a
// split row never looks portable. Groups past the last share its colour (their letters still differ).
constexpr int kGroupColours = 8;

constexpr const char* kFleetStyle =
    R"(table.fleet td.host{text-align:center;font-weight:600;min-width:2.5em;}
table.fleet td.key{font-family:ui-monospace,monospace;font-size:.9em;white-space:nowrap;}
table.fleet th.first,table.fleet td.first{border-left:3px solid #57606a;}
th.platform{background:#dde7f3;}th.host{text-align:center;}
tr.portable td.key{border-left:6px solid #1a7f37;}tr.split td.key{border-left:6px solid #bf8700;}
tr.nondeterministic td.key{border-left:6px solid #cf222e;}tr.not-comparable td.key{border-left:6px solid #d0d7de;}
tr.portable td.verdict{color:#1a7f37;font-weight:600;}th.platform small{font-weight:400;}
.legend span.rule{width:.4em;height:1em;padding:0;vertical-align:middle;}.rule.portable{background:#1a7f37;}
.rule.split{background:#bf8700;}.rule.nondeterministic{background:#cf222e;}.rule.not-comparable{background:#d0d7de;}
.same{background:#8fd19e;}
.g0{background:#9ec5f0;}.g1{background:#f5b971;}.g2{background:#c9a8ec;}.g3{background:#7fd3cb;}
.g4{background:#f3e07a;}.g5{background:#eba3b8;}.g6{background:#b7c48a;}.g7{background:#aab4c4;}
.nd{background:repeating-linear-gradient(45deg,#f7b6b2,#f7b6b2 6px,#fde4e2 6px,#fde4e2 9px);color:#82071e;outline:2px solid #cf222e;outline-offset:-2px;}
.failed{background:#57606a;color:#fff;}
.skip{background:#eaeef2;color:#57606a;font-style:italic;font-weight:400;}
.absent{background:#fff;color:#8c959f;font-weight:400;}
.differs{background:#fff8c5;}
)";

std::string css_class(const FleetCell& cell, const FleetEntry& entry) {
  if (entry.state == "digest")
    return cell.category == FleetCategory::portable ? "same"
                                                    : fmt::format("g{}", std::min(entry.group, kGroupColours - 1));
  if (entry.state == "absent") return "absent";
  if (entry.state == "nondeterministic") return "nd";
  if (entry.state == "unsupported") return "skip";
  return "failed";
}

std::string legend() {
  std::string text = "<p class=\"legend\"><span class=\"same\">A</span>portable: same bits on every host that ran it ";
  for (int g = 0; g < 3; ++g) text += fmt::format("<span class=\"g{}\">{}</span>", g, fleet_group_name(g));
  return text +
         "split: hosts with one letter have the same bits (A: the most hosts) "
         "<span class=\"nd\">ND</span>runs disagree on that host "
         "<span class=\"failed\">raises</span>raised or failed there "
         "<span class=\"skip\">skip</span>unsupported there <span class=\"absent\">-</span>not run there<br>"
         "The rule before a cell: <span class=\"rule portable\"></span>portable fleet-wide "
         "<span class=\"rule split\"></span>split <span class=\"rule nondeterministic\"></span>nondeterministic "
         "on some host <span class=\"rule not-comparable\"></span>not comparable</p>\n";
}

// One column per host, under one header per platform; a thick rule where a platform starts.
std::string matrix_table(const FleetMatrix& fleet) {
  const auto columns = fleet_columns(fleet);
  std::vector<bool> first(fleet.hosts.size(), false);
  std::string table = "<table class=\"fleet\">\n<thead><tr><th rowspan=\"2\">cell</th>";
  for (const auto& platform : fleet.platforms) {
    first[static_cast<std::size_t>(platform.hosts.front())] = true;
    std::vector<std::string> fields;
    for (const auto& [label, value] : platform.fields) fields.push_back(label + ": " + value);
    table += fmt::format("<th class=\"platform first\" colspan=\"{}\" title=\"{}\">{}<br><small>{}</small></th>",
                         platform.hosts.size(), xml_escape(fmt::format("{}", fmt::join(fields, "\n"))),
                         xml_escape(platform.label), xml_escape(platform.summary));
  }
  table += "<th rowspan=\"2\">across the fleet</th></tr>\n<tr>";
  for (const auto h : columns)
    table += fmt::format("<th class=\"host{}\">{}</th>", first[h] ? " first" : "", xml_escape(fleet.hosts[h].name));
  table += "</tr></thead>\n<tbody>\n";
  for (const auto& cell : fleet.cells) {
    table += fmt::format("<tr class=\"{}\"><td class=\"key\">{}</td>", to_string(cell.category), xml_escape(cell.key));
    for (const auto h : columns) {
      const auto& entry = cell.entries[h];
      const auto title = fmt::format("{}: {}", fleet.hosts[h].name, entry.digest.empty() ? entry.state : entry.digest);
      table += fmt::format("<td class=\"host {}{}\" title=\"{}\">{}</td>", css_class(cell, entry),
                           first[h] ? " first" : "", xml_escape(title), xml_escape(fleet_mark(entry)));
    }
    table += "<td class=\"verdict\">" + xml_escape(fleet_verdict_text(fleet, cell)) + "</td></tr>\n";
  }
  return table + "</tbody></table>\n";
}

// The platforms side by side on the fields that tell them apart; every field on request.
std::string platforms_table(const FleetMatrix& fleet) {
  if (fleet.platforms.empty()) return "";
  std::vector<std::string> labels;
  for (const auto& platform : fleet.platforms)
    for (const auto& [label, value] : platform.fields)
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
  std::string differing, same;
  for (const auto& label : labels) {
    bool differs = false;
    for (const auto& platform : fleet.platforms)
      differs =
          differs || platform_value(platform.fields, label) != platform_value(fleet.platforms.front().fields, label);
    std::string row = "<tr><th>" + xml_escape(label) + "</th>";
    for (const auto& platform : fleet.platforms)
      row += fmt::format("<td{}>{}</td>", differs ? " class=\"differs\"" : "",
                         xml_escape(platform_value(platform.fields, label)));
    (differs ? differing : same) += row + "</tr>\n";
  }
  std::string header = "<tr><th>field</th>";
  for (const auto& platform : fleet.platforms) {
    std::vector<std::string> names;
    for (const int host : platform.hosts) names.push_back(fleet.hosts[static_cast<std::size_t>(host)].name);
    header += fmt::format("<th>{}<br>{}</th>", xml_escape(platform.label),
                          xml_escape(fmt::format("{}", fmt::join(names, ", "))));
  }
  header += "</tr>\n";
  std::string html = "<h2>Platforms</h2>\n";
  if (!differing.empty())
    html += "<p>The fields that differ between platforms:</p>\n<table class=\"platforms\">\n" + header + differing +
            "</table>\n";
  if (!same.empty())
    html += "<details><summary>The fields every platform shares</summary>\n<table class=\"platforms\">\n" + header +
            same + "</table>\n</details>\n";
  return html;
}

}  // namespace

std::string fleet_html(const FleetMatrix& fleet) {
  std::string body = "<h1>Fleet matrix</h1>\n";
  body += fmt::format("<p>{} hosts on {} platforms, {} cells.</p>\n<ul class=\"summary\">\n", fleet.hosts.size(),
                      fleet.platforms.size(), fleet.cells.size());
  for (const auto& line : fleet_summary(fleet)) body += "<li>" + xml_escape(line) + "</li>\n";
  body += "</ul>\n" + legend() + matrix_table(fleet) + platforms_table(fleet);
  return html_document("repro-audit fleet matrix", body, kFleetStyle);
}

}  // namespace repro_audit
