#include "cli/sensitivity_table.h"

#include <fmt/format.h>

#include "verdict/verdict.h"

namespace repro_audit {

int print_sensitivities(const std::vector<VariantSensitivity>& results, std::uint64_t seed, std::ostream& out) {
  out << fmt::format(
      "Order sensitivity: each accumulating output summed again in other orders on the CPU (inputs of seed {}); a "
      "variant whose output barely changes could not show a reordering, and its deterministic verdicts are "
      "vacuous\n",
      seed);
  int failures = 0;
  for (const auto& result : results) {
    const auto name = result.probe + "/" + result.variant;
    if (result.sensitivity) {
      const bool insensitive = result.sensitivity->insensitive();
      failures += insensitive && result.by_design.empty() ? 1 : 0;
      out << fmt::format("  {:<34} {:<12} {}{}\n", name, insensitive ? "INSENSITIVE" : "sensitive",
                         sensitivity_text(*result.sensitivity),
                         insensitive && !result.by_design.empty() ? "; by design: " + result.by_design : "");
    } else if (!result.problem.empty()) {
      ++failures;
      out << fmt::format("  {:<34} {:<12} {}\n", name, "NOT CHECKED", result.problem);
    } else {
      out << fmt::format("  {:<34} {:<12} {}\n", name, "skipped", result.skipped);
    }
  }
  return failures;
}

}  // namespace repro_audit
