#pragma once
// A report as JUnit XML: a testsuite per probe, a testcase per cell.
#include <string>

#include "report/report.h"

namespace repro_audit {

// A failing verdict, or a contradiction that fails the audit, is a <failure> carrying the verdict
// details; an unsupported cell is <skipped> with its reason.
std::string render_junit(const Report& report);

}  // namespace repro_audit
