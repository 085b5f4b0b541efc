#pragma once
// Everything known about one cell, for `repro-audit show`: verdict detail, timing, kernels.
#include <ostream>

#include "report/report.h"

namespace repro_audit {

void print_cell_details(const CellReport& cell, std::ostream& out);
// One line per cell: verdict, median time, key.
void print_cell_list(const Report& report, std::ostream& out);
// Cells whose key equals `pattern`, else every cell whose key contains it.
std::vector<const CellReport*> match_cells(const Report& report, const std::string& pattern);

}  // namespace repro_audit
