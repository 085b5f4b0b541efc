#pragma once
// A report as Markdown that fits a GitHub job summary: verdict matrix, contradictions, failing cells.
#include <string>

#include "report/report.h"

namespace repro_audit {

std::string render_markdown(const Report& report);

}  // namespace repro_audit
