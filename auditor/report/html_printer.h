#pragma once
// A report as one self-contained HTML file that works offline: verdict heatmap, cost chart (inline
// SVG), per-cell details with kernel lists, the environment. No script, nothing loaded from anywhere.
#include <string>

#include "report/report.h"

namespace repro_audit {

std::string render_html(const Report& report);

// The CSS class that colours a verdict in the heatmap, e.g. "v-nondeterministic"; error, crashed
// and timeout share "v-broken".
std::string verdict_css_class(const Verdict& verdict);

}  // namespace repro_audit
