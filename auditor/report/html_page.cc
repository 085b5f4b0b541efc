#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/escape.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

// System fonts only: a web font would be a network fetch.
constexpr const char* kStyle = R"(body{font-family:system-ui,sans-serif;margin:1.5em;color:#1b1f24;}
h1{font-size:1.5em;}h2{font-size:1.2em;margin-top:1.6em;}
table{border-collapse:collapse;margin:.5em 0;}th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top;}
th{background:#f6f8fa;}code,pre{font-family:ui-monospace,monospace;font-size:.9em;}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;}
td.cell{text-align:center;font-weight:600;}td.cell a{color:inherit;text-decoration:none;}
.v-deterministic{background:#c8ebd0;}.v-nondeterministic{background:#f7b6b2;}.v-warns{background:#fde7a9;}
.v-invariant{background:#c8ebd0;}.v-varies{background:#f9d0a8;}
.v-raises{background:#c9def7;}.v-unsupported{background:#eaeef2;color:#57606a;}.v-broken{background:#d2271e;color:#fff;}
.contradiction{outline:3px solid #82071e;outline-offset:-3px;}
.passed{color:#1a7f37;}.failed{color:#cf222e;}
.bar-slow{fill:#e5534b;}.bar-fast{fill:#2da44e;}.bar-even{fill:#8c959f;}
details{margin:.3em 0;}summary{cursor:pointer;}
.legend span{display:inline-block;padding:.1em .5em;margin-right:.3em;border:1px solid #d0d7de;}
)";

std::size_t code_points(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string html_document(const std::string& title, const std::string& body, const std::string& extra_style) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>\n{}{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      xml_escape(title), kStyle, extra_style, body);
}

std::string svg_ratio_chart(const std::vector<ChartBar>& bars, const std::string& caption) {
  if (bars.empty()) return "";
  constexpr int bar_width = 320, row = 22, top = 24;
  // Labels are right-aligned against the bars: leave room for the longest at ~7 px per character.
  std::size_t longest = 0;
  double largest = 1.0;
  for (const auto& bar : bars) {
    largest = std::max(largest, bar.value);
    longest = std::max(longest, code_points(bar.label));
  }
  const int label_width = static_cast<int>(std::clamp<std::size_t>(longest * 7 + 12, 120, 800));
  const double scale = bar_width / (largest * 1.1);
  const int height = top + row * static_cast<int>(bars.size()) + 8;
  std::string svg = fmt::format(
      "<svg role=\"img\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-size=\"12\">\n"
      "<title>{2}</title>\n<text x=\"{3}\" y=\"14\" font-weight=\"600\">{2}</text>\n",
      label_width + bar_width + 60, height, xml_escape(caption), 4);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& bar = bars[i];
    const int y = top + row * static_cast<int>(i);
    const double width = std::max(1.0, bar.value * scale);
    svg += fmt::format(
        "<g><title>{0}: {1:.2f}x</title><text x=\"{2}\" y=\"{3}\" text-anchor=\"end\">{0}</text>"
        "<rect class=\"{4}\" x=\"{5}\" y=\"{6}\" width=\"{7:.1f}\" height=\"16\"/>"
        "<text x=\"{8:.1f}\" y=\"{3}\">{1:.2f}x</text></g>\n",
        xml_escape(bar.label), bar.value, label_width - 6, y + 12, xml_escape(bar.css_class), label_width, y, width,
        label_width + width + 4);
  }
  const double reference = label_width + scale;
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#1b1f24\" stroke-dasharray=\"4 3\"/>\n",
      reference, top - 4, height - 4);
  return svg + "</svg>\n";
}

std::string html_environment_table(const nlohmann::json& environment) {
  std::string html = "<table>\n";
  for (const auto& field : environment_fields(environment))
    if (!field.value.empty())
      html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(field.label), xml_escape(field.value));
  return html + "</table>\n";
}

}  // namespace repro_audit
