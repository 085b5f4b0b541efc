#include "report/junit_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/junit_xml.h"
#include "report/text_format.h"

namespace repro_audit {

std::string render_junit(const Report& report) {
  std::vector<JUnitCase> cases;
  for (const auto& cell : report.cells) {
    JUnitCase test;
    test.suite = cell.cell.probe;
    test.name = cell.cell.key;
    test.seconds = static_cast<double>(total_run_time_ns(cell)) / 1e9;
    const bool breaks_audit = cell.contradiction && cell.contradiction->breaks_audit;
    if (is_skipped(cell.verdict)) {
      test.skipped_message = cell.verdict.message.empty() ? "unsupported" : cell.verdict.message;
    } else if (is_failing(cell.verdict) || breaks_audit) {
      test.failure_message = verdict_headline(cell);
      test.failure_type = to_string(cell.verdict.kind);
      test.text = fmt::format("{}", fmt::join(verdict_details(cell), "\n"));
      if (cell.contradiction) test.text += "\n" + documentation_line(report);
    }
    cases.push_back(std::move(test));
  }
  return junit_document("repro-audit", cases);
}

}  // namespace repro_audit
