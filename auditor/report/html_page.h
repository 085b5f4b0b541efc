#pragma once
// The pieces every HTML printer shares: one self-contained page (inline CSS, inline SVG, no script,
// nothing fetched from the network) and a bar chart.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace repro_audit {

// A complete page; `body` is HTML already escaped by the caller.
// `extra_style`: rules of one kind of page only (e.g. the comparison's change classes).
std::string html_document(const std::string& title, const std::string& body, const std::string& extra_style = "");

struct ChartBar {
  std::string label;  // plain text, escaped here
  double value = 0;
  std::string css_class;  // colour, from the page's style sheet
};

// Horizontal bars with a dashed reference line at 1.0 ("as fast as the reference"); values as "1.8x".
// Empty when there are no bars.
std::string svg_ratio_chart(const std::vector<ChartBar>& bars, const std::string& caption);

// A two-column table of the environment fingerprint fields.
std::string html_environment_table(const nlohmann::json& environment);

}  // namespace repro_audit
