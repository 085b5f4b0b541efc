#pragma once
// Text shared by the printers: durations, verdict details, the environment as labelled fields.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace repro_audit {

// "850 ns", "12.3 µs", "1.20 ms", "2.50 s": three significant digits, enough to tell cells apart.
std::string format_duration(std::int64_t nanoseconds);

// "median 1.20 ms (95% interval 1.19-1.21 ms, ±0.8%; p10 1.18 ms, p90 1.30 ms; 40 samples)", with
// "target not met" when the timing rule ran out of budget first.
std::string timing_summary(const Timing& timing);

// The first 12 hex digits: enough to tell digests apart by eye in a table.
std::string short_digest(const std::string& digest);

// One line: "nondeterministic: 3 distinct digests (within-process)", "crashed: SIGSEGV".
std::string verdict_headline(const CellReport& cell);
// Everything a reader needs to act on a cell, one fact per line: divergence, message, warnings,
// contradiction, timing, kernel tracing.
std::vector<std::string> verdict_details(const CellReport& cell);

// "batch=7@first: 3 of 1024 elements differ, max abs 1e-07, max ULP 2": one perturbation that broke
// an invariance; "batch=7@first: digests differ" where it was not measured.
std::string variation_text(const Divergence& variation);

// Sum of the timed (non-warm-up) runs of every process.
std::int64_t total_run_time_ns(const CellReport& cell);

// Human-readable fingerprint fields (fingerprints of version 1 and 2), in a fixed order, then one
// field per numerics environment variable ("env ATEN_CPU_CAPABILITY"). A field the fingerprint does
// not record has the value "". Which of them make up the platform is the gate's definition:
// compare/platform.h.
struct EnvironmentField {
  std::string label;
  std::string value;                 // "" when not recorded; "none" for a recorded empty list
  std::vector<std::string> members;  // a list field (CPU flags, ATen capabilities, sources): compared as a set
  bool is_set = false;
};
std::vector<EnvironmentField> environment_fields(const nlohmann::json& environment);
// The label of a numerics environment variable's field starts with this.
inline constexpr std::string_view kVariableLabelPrefix = "env ";

// The sequences of distinct kernels a cell launched, over all its processes, deduplicated by digest.
std::vector<std::pair<std::string, std::vector<KernelRecord>>> kernel_sequences(const CellReport& cell);

// The verdict matrix as the terminal shows it: a row per probe/variant, a column per flag set.
struct MatrixRow {
  std::string name;                      // "probe/variant"
  std::vector<const CellReport*> cells;  // aligned with Report::columns; null where no cell
};
std::vector<MatrixRow> verdict_matrix(const Report& report);

// The marks of the verdict matrix and what they mean, in the order every printer's legend lists them:
// the terminal, Markdown and HTML print this one list. `css_class` colours the mark in HTML (empty: plain).
struct LegendEntry {
  std::string mark;  // "✓", "ERR/CRASH/TIME", "Nx"
  std::string meaning;
  std::string css_class;
};
// `with_cost`: add "Nx cost against the default profile" (the terminal omits it under --no-cost).
std::vector<LegendEntry> verdict_legend(bool with_cost = true);

// "4 deterministic, 1 nondeterministic": counts per verdict, in the verdict enum's order.
std::string verdict_counts(const Report& report);

// "Documented behaviour: torch 2.11's documentation": what the cells' `documented` was compared with.
std::string documentation_line(const Report& report);

// What the runs could catch (the rate --detect chose them for) and the deterministic verdicts that
// are vacuous (inputs insensitive to the order of accumulation): lines for every printer's summary.
std::vector<std::string> power_lines(const Report& report);

// The summary's findings in the order every printer lists them: contradictions of PyTorch's
// documentation, then the cells that ended without a verdict (a probe's or a model's own failure, or
// its environment's, which says nothing of the documentation). Empty groups are left out.
struct FindingGroup {
  std::string heading;
  std::vector<const CellReport*> cells;
};
std::vector<FindingGroup> finding_groups(const Report& report);

// The report's own fail_on rule (from its config), contradiction when absent or unknown.
FailOn report_fail_on(const Report& report);

}  // namespace repro_audit
