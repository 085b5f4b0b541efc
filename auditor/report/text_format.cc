#include "report/text_format.h"

#include "kind/cell_kind.h"

#include "config/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace repro_audit {
namespace {

std::string three_digits(double value, const char* unit) {
  if (value >= 100) return fmt::format("{:.0f} {}", value, unit);
  if (value >= 10) return fmt::format("{:.1f} {}", value, unit);
  return fmt::format("{:.2f} {}", value, unit);
}

}  // namespace

std::string format_duration(std::int64_t nanoseconds) {
  const auto ns = static_cast<double>(nanoseconds);
  if (nanoseconds < 1000) return fmt::format("{} ns", nanoseconds);
  if (nanoseconds < 1000000) return three_digits(ns / 1e3, "µs");
  if (nanoseconds < 1000000000) return three_digits(ns / 1e6, "ms");
  return three_digits(ns / 1e9, "s");
}

std::string timing_summary(const Timing& timing) {
  std::string interval = timing.samples < 6 ? "no 95% interval under 6 samples" : "no 95% interval kept";
  if (timing.has_interval())
    interval = fmt::format("95% interval {}-{}, ±{:.1f}%{}", format_duration(timing.ci_low_ns),
                           format_duration(timing.ci_high_ns), 100 * timing.relative_half_width(),
                           timing.target_reached ? "" : ", target not met");
  return fmt::format("median {} ({}; p10 {}, p90 {}; {} samples)", format_duration(timing.median_ns), interval,
                     format_duration(timing.p10_ns), format_duration(timing.p90_ns), timing.samples);
}

std::string short_digest(const std::string& digest) { return digest.substr(0, 12); }

std::string verdict_headline(const CellReport& cell) {
  const auto& v = cell.verdict;
  std::string text = to_string(v.kind);
  if (v.kind == VerdictKind::nondeterministic || (v.kind == VerdictKind::warns && !v.digests_agree)) {
    text += fmt::format(": {} distinct digests in {} runs{}", v.distinct_digests, v.runs,
                        v.stopped_early ? " (stopped at the first divergence)" : "");
    if (!v.divergence_scope.empty()) text += fmt::format(" ({})", v.divergence_scope);
  } else if (v.kind == VerdictKind::deterministic) {
    text += fmt::format(": {} runs agree", v.runs);
  } else if (!v.message.empty()) {
    text += ": " + v.message;
  }
  return text;
}

std::string variation_text(const Divergence& variation) {
  if (variation.differing_elements < 0) return variation.output + ": digests differ";
  return fmt::format("{}: {} of {} elements differ, max abs {:g}, max ULP {:g}", variation.output,
                     variation.differing_elements, variation.elements, variation.max_abs_difference,
                     variation.max_ulp_difference);
}

std::vector<std::string> verdict_details(const CellReport& cell) {
  const auto& v = cell.verdict;
  std::vector<std::string> lines;
  if (!v.digest.empty()) lines.push_back(fmt::format("digest {}", v.digest));
  if (runs_agreed(v.kind))
    lines.push_back(fmt::format("per-run divergence rate below {:.3f} (95%)", v.divergence_rate_bound));
  if (const auto documented = documented_from_string(cell.documented))
    if (auto quiet = quiet_runs_text(*documented, cell.cell.settings, v); !quiet.empty()) lines.push_back(quiet);
  if (const auto& d = v.divergence) {
    auto line = fmt::format("first divergence: output '{}', run {}", d->output, d->run);
    if (d->differing_elements >= 0)
      line += fmt::format(", {} of {} elements differ, max abs {:g}, max ULP {:g}", d->differing_elements, d->elements,
                          d->max_abs_difference, d->max_ulp_difference);
    lines.push_back(line);
  }
  if (!v.message.empty()) lines.push_back("message: " + v.message);
  for (auto& line : kind_of(cell.cell).detail_lines(v)) lines.push_back(std::move(line));
  for (const auto& warning : v.warnings) lines.push_back("warning: " + warning);
  if (cell.contradiction)
    lines.push_back(fmt::format("{} (documented: {}): {}", cell.contradiction->breaks_audit ? "contradiction" : "note",
                                cell.documented, cell.contradiction->text));
  if (v.timing.samples > 0) lines.push_back(timing_summary(v.timing));
  if (cell.cost) lines.push_back("cost " + cost_detail(*cell.cost) + " the default profile");
  if (v.kernels_varied) lines.push_back("kernel selection varied between runs");
  for (const auto& observation : cell.observations)
    if (!observation.trace_unavailable.empty()) {
      lines.push_back("kernels not traced: " + observation.trace_unavailable);
      break;
    }
  return lines;
}

std::int64_t total_run_time_ns(const CellReport& cell) {
  std::int64_t total = 0;
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.warmup) total += run.time_ns;
  return total;
}

std::vector<std::pair<std::string, std::vector<KernelRecord>>> kernel_sequences(const CellReport& cell) {
  std::vector<std::pair<std::string, std::vector<KernelRecord>>> sequences;
  for (const auto& observation : cell.observations)
    for (const auto& sequence : observation.kernel_sequences) {
      bool seen = false;
      for (const auto& known : sequences) seen = seen || known.first == sequence.first;
      if (!seen) sequences.push_back(sequence);
    }
  return sequences;
}

std::vector<MatrixRow> verdict_matrix(const Report& report) {
  // Rows and columns by name: searching the lists for each cell would be quadratic.
  std::unordered_map<std::string, std::size_t> row_of, column_of;
  for (std::size_t i = 0; i < report.columns.size(); ++i) column_of.emplace(report.columns[i], i);
  std::vector<MatrixRow> rows;
  for (const auto& cell : report.cells) {
    const auto name = cell.cell.probe + "/" + cell.cell.variant;
    const auto [row, added] = row_of.emplace(name, rows.size());
    if (added) rows.push_back({name, std::vector<const CellReport*>(report.columns.size())});
    const auto column = column_of.find(cell.cell.label);
    if (column != column_of.end()) rows[row->second].cells[column->second] = &cell;
  }
  return rows;
}

std::vector<LegendEntry> verdict_legend(bool with_cost) {
  std::vector<LegendEntry> legend = {
      {"✓", "deterministic", "v-deterministic"},
      {"✗", "nondeterministic", "v-nondeterministic"},
      {"=", "invariant (invariance probes)", "v-invariant"},
      {"≠", "varies", "v-varies"},
      {"R", "raises", "v-raises"},
      {"W", "warns", "v-warns"},
      {"skip", "unsupported", "v-unsupported"},
      {"ERR/CRASH/TIME", "failed", "v-broken"},
      {"!", "contradicts the documentation (fails)", "contradiction"},
      {"?", "contradicts it (note)", ""},
  };
  if (with_cost) {
    legend.push_back({"Nx", "cost against the default profile", ""});
    legend.push_back({"~1.0x", "no measurable cost: the 95% interval of the ratio reaches within 1% of 1", ""});
  }
  return legend;
}

std::string documentation_line(const Report& report) {
  return "Documented behaviour: " + (report.documentation
                                         ? report.documentation->text()
                                         : std::string("not recorded (a report of an earlier version)"));
}

std::string verdict_counts(const Report& report) {
  std::map<VerdictKind, int> counts;
  for (const auto& cell : report.cells) ++counts[cell.verdict.kind];
  std::vector<std::string> parts;
  for (const auto& [kind, count] : counts) parts.push_back(fmt::format("{} {}", count, to_string(kind)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> power_lines(const Report& report) {
  std::vector<std::string> lines;
  const auto detect = report.config.find("detect");
  if (detect != report.config.end() && detect->is_number()) {
    const double rate = detect->get<double>();
    if (rate >= kMinDetectRate && rate <= kMaxDetectRate) {
      const int needed = runs_to_detect(rate);
      const auto fewer = std::count_if(report.cells.begin(), report.cells.end(), [&](const CellReport& cell) {
        return runs_agreed(cell.verdict.kind) && cell.verdict.runs < needed;
      });
      lines.push_back(fmt::format(
          "Runs chosen by --detect {:g}: {} runs per cell catch, with 95% confidence, a divergence that shows in a "
          "fraction {:g} of runs{}",
          rate, needed, rate,
          fewer == 0 ? std::string()
                     : fmt::format("; {} cell(s) whose runs agreed ran fewer and could miss it (their bound says how "
                                   "much)",
                                   fewer)));
    }
  }
  const auto vacuous = std::count_if(report.cells.begin(), report.cells.end(),
                                     [](const CellReport& cell) { return is_vacuous(cell.verdict); });
  if (vacuous > 0)
    lines.push_back(fmt::format(
        "{} deterministic verdict(s) vacuous: their inputs are insensitive to the order of accumulation, so a kernel "
        "that reorders the sum would give the same bits (show CELL says how many elements change)",
        vacuous));
  return lines;
}

FailOn report_fail_on(const Report& report) {
  const auto it = report.config.find("fail_on");
  const auto parsed =
      it != report.config.end() && it->is_string() ? fail_on_from_string(it->get<std::string>()) : std::nullopt;
  return parsed.value_or(FailOn::contradiction);
}

std::vector<FindingGroup> finding_groups(const Report& report) {
  std::vector<FindingGroup> groups = {{"Contradictions with PyTorch's documentation", {}},
                                      {"Cells that ended without a verdict", {}}};
  for (const auto& cell : report.cells)
    if (cell.contradiction) groups[cell.contradiction->expected == kExpectedVerdict ? 1 : 0].cells.push_back(&cell);
  std::erase_if(groups, [](const FindingGroup& group) { return group.cells.empty(); });
  return groups;
}

}  // namespace repro_audit
