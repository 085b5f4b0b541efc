#pragma once
// The pass/fail matrix for a terminal: rows are probe variants, columns flag sets.
#include <ostream>

#include "report/report.h"

namespace repro_audit {

struct TerminalOptions {
  bool color = false;
  bool show_cost = true;
};

void print_matrix(const Report& report, std::ostream& out, const TerminalOptions& options);
void print_summary(const Report& report, FailOn fail_on, std::ostream& out);
// The short mark of a verdict, e.g. "✓", "✗", "R", "W✗".
std::string verdict_mark(const CellReport& cell);

}  // namespace repro_audit
