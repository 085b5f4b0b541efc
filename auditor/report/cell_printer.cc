#include "report/cell_printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kind/cell_kind.h"
#include "report/escape.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

std::string milliseconds(std::int64_t ns) { return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6); }

void print_divergence(const Verdict& verdict, std::ostream& out) {
  if (!verdict.divergence) return;
  const auto& d = *verdict.divergence;
  out << fmt::format("  first divergent output: {} (run {} against run 0, {})\n", terminal_text(d.output), d.run,
                     terminal_text(verdict.divergence_scope));
  if (d.differing_elements >= 0)
    out << fmt::format("    {} of {} elements differ; max abs difference {:g}; max ULP difference {:g}\n",
                       d.differing_elements, d.elements, d.max_abs_difference, d.max_ulp_difference);
  else
    out << "    differs only across processes: digests compared, elements not\n";
}

void print_kernels(const CellReport& cell, std::ostream& out) {
  out << fmt::format("  kernels: {}\n",
                     cell.verdict.kernels_varied ? "SELECTION VARIED between runs" : "the same in every run");
  for (const auto& observation : cell.observations) {
    if (!observation.trace_unavailable.empty()) {
      out << fmt::format("    process {}: trace unavailable: {}\n", observation.process,
                         terminal_text(observation.trace_unavailable));
      continue;
    }
    for (const auto& [digest, kernels] : observation.kernel_sequences) {
      out << fmt::format("    process {}, sequence {} ({} launches):\n", observation.process, digest.substr(0, 12),
                         kernels.size());
      for (const auto& kernel : kernels)
        out << "      " << terminal_text(kernel.name)
            << (kernel.grid.empty()
                    ? ""
                    : fmt::format("  grid {} block {}", terminal_text(kernel.grid), terminal_text(kernel.block)))
            << "\n";
    }
  }
}

}  // namespace

void print_cell_details(const CellReport& cell, std::ostream& out) {
  const auto& v = cell.verdict;
  out << cell.cell.key << "\n";
  // Every string from the report is shown as one line of text (report/escape.h terminal_text).
  out << fmt::format("  verdict: {}{}\n", to_string(v.kind), v.message.empty() ? "" : ": " + terminal_text(v.message));
  out << fmt::format("  documented: {}\n", terminal_text(cell.documented));
  if (cell.contradiction)
    out << fmt::format("  contradiction ({}): {}\n", cell.contradiction->breaks_audit ? "fails the audit" : "note",
                       terminal_text(cell.contradiction->text));
  out << fmt::format("  runs: {} in {} process(es); {} distinct digest(s){}\n", v.runs, v.processes, v.distinct_digests,
                     v.stopped_early    ? "; stopped at the first divergence: the verdict was certain"
                     : v.budget_limited ? "; fewer repeats: the cell's share of --budget was spent"
                                        : "");
  if (runs_agreed(v.kind))
    out << fmt::format("  digest {}; 95% upper bound on the per-run divergence rate: {:.4f}\n", v.digest,
                       v.divergence_rate_bound);
  if (const auto documented = documented_from_string(cell.documented))
    if (const auto quiet = quiet_runs_text(*documented, cell.cell.settings, v); !quiet.empty())
      out << "  " << quiet << "\n";
  print_divergence(v, out);
  for (const auto& line : kind_of(cell.cell).detail_lines(v)) out << "  " << terminal_text(line) << "\n";
  for (const auto& warning : v.warnings) out << "  warning: " << terminal_text(warning) << "\n";
  if (v.timing.samples > 0)
    out << "  timing: " << timing_summary(v.timing)
        << (cell.cost ? "; cost " + cost_detail(*cell.cost) + " the default profile" : "") << "\n";
  print_kernels(cell, out);
}

void print_cell_list(const Report& report, std::ostream& out) {
  for (const auto& cell : report.cells)
    out << fmt::format("{:<17} {:>12}  {}\n", to_string(cell.verdict.kind),
                       cell.verdict.timing.samples ? milliseconds(cell.verdict.timing.median_ns) : "-", cell.cell.key);
}

std::vector<const CellReport*> match_cells(const Report& report, const std::string& pattern) {
  if (const auto* exact = find_cell(report, pattern)) return {exact};
  std::vector<const CellReport*> matches;
  for (const auto& cell : report.cells)
    if (cell.cell.key.find(pattern) != std::string::npos) matches.push_back(&cell);
  return matches;
}

}  // namespace repro_audit
