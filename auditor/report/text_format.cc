#include "report/text_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace repro_audit {
using nlohmann::json;
namespace {

std::string three_digits(double value, const char* unit) {
  if (value >= 100) return fmt::format("{:.0f} {}", value, unit);
  if (value >= 10) return fmt::format("{:.1f} {}", value, unit);
  return fmt::format("{:.2f} {}", value, unit);
}

std::string text_of(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

const json& field(const json& object, const char* name) {
  static const json absent;
  if (!object.is_object()) return absent;
  auto it = object.find(name);
  return it == object.end() ? absent : *it;
}

// CUDA encodes 1000 * major + 10 * minor: 13000 is 13.0, 12040 is 12.4.
std::string cuda_version(const json& value) {
  if (!value.is_number_integer()) return text_of(value);
  const auto v = value.get<std::int64_t>();
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

// cuDNN 9 encodes 10000 * major + 100 * minor + patch (92400 is 9.24.0); cuDNN 8 used 1000 * major.
std::string cudnn_version(const json& value) {
  if (!value.is_number_integer()) return text_of(value);
  const auto v = value.get<std::int64_t>();
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, v % 10000 / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, v % 1000 / 100, v % 100);
}

std::string gpus(const json& cuda) {
  std::vector<std::string> names;
  const auto& devices = field(cuda, "devices");
  if (!devices.is_array()) return "";
  for (const auto& device : devices) {
    auto name = text_of(field(device, "name"));
    const auto& sm_count = field(device, "sm_count");
    if (!sm_count.is_null()) name += fmt::format(" ({} SMs)", text_of(sm_count));
    names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::string format_duration(std::int64_t nanoseconds) {
  const auto ns = static_cast<double>(nanoseconds);
  if (nanoseconds < 1000) return fmt::format("{} ns", nanoseconds);
  if (nanoseconds < 1000000) return three_digits(ns / 1e3, "µs");
  if (nanoseconds < 1000000000) return three_digits(ns / 1e6, "ms");
  return three_digits(ns / 1e9, "s");
}

std::string short_digest(const std::string& digest) { return digest.substr(0, 12); }

std::string verdict_headline(const CellReport& cell) {
  const auto& v = cell.verdict;
  std::string text = to_string(v.kind);
  if (v.kind == VerdictKind::nondeterministic || (v.kind == VerdictKind::warns && !v.digests_agree)) {
    text += fmt::format(": {} distinct digests in {} runs", v.distinct_digests, v.runs);
    if (!v.divergence_scope.empty()) text += fmt::format(" ({})", v.divergence_scope);
  } else if (v.kind == VerdictKind::deterministic) {
    text += fmt::format(": {} runs agree", v.runs);
  } else if (!v.message.empty()) {
    text += ": " + v.message;
  }
  return text;
}

std::vector<std::string> verdict_details(const CellReport& cell) {
  const auto& v = cell.verdict;
  std::vector<std::string> lines;
  if (!v.digest.empty()) lines.push_back(fmt::format("digest {}", v.digest));
  if (v.kind == VerdictKind::deterministic)
    lines.push_back(fmt::format("per-run divergence rate below {:.3f} (95%)", v.divergence_rate_bound));
  if (const auto& d = v.divergence) {
    auto line = fmt::format("first divergence: output '{}', run {}", d->output, d->run);
    if (d->differing_elements >= 0)
      line += fmt::format(", {} of {} elements differ, max abs {:g}, max ULP {:g}", d->differing_elements, d->elements,
                          d->max_abs_difference, d->max_ulp_difference);
    lines.push_back(line);
  }
  if (!v.message.empty()) lines.push_back("message: " + v.message);
  for (const auto& warning : v.warnings) lines.push_back("warning: " + warning);
  if (cell.contradiction)
    lines.push_back(fmt::format("{} (documented: {}): {}", cell.contradiction->breaks_audit ? "contradiction" : "note",
                                cell.documented, cell.contradiction->text));
  if (v.timing.samples > 0)
    lines.push_back(fmt::format("median {} (p10 {}, p90 {}, {} samples)", format_duration(v.timing.median_ns),
                                format_duration(v.timing.p10_ns), format_duration(v.timing.p90_ns), v.timing.samples));
  if (cell.cost_ratio) lines.push_back(fmt::format("cost {:.2f}x the default profile", *cell.cost_ratio));
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

std::vector<EnvironmentField> environment_fields(const json& environment) {
  const auto& cuda = field(environment, "cuda");
  return {
      {"torch", text_of(field(environment, "torch"))},
      {"CUDA runtime", cuda_version(field(cuda, "runtime"))},
      {"CUDA driver", cuda_version(field(cuda, "driver"))},
      {"cuDNN", cudnn_version(field(cuda, "cudnn"))},
      {"GPU", gpus(cuda)},
      {"CPU", text_of(field(environment, "cpu"))},
      {"threads", text_of(field(environment, "threads"))},
      {"OS", text_of(field(environment, "os"))},
      {"tool", text_of(field(environment, "tool_version"))},
  };
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
      {"R", "raises", "v-raises"},
      {"W", "warns", "v-warns"},
      {"skip", "unsupported", "v-unsupported"},
      {"ERR/CRASH/TIME", "failed", "v-broken"},
      {"!", "contradicts the documentation (fails)", "contradiction"},
      {"?", "contradicts it (note)", ""},
  };
  if (with_cost) legend.push_back({"Nx", "cost against the default profile", ""});
  return legend;
}

std::string verdict_counts(const Report& report) {
  std::map<VerdictKind, int> counts;
  for (const auto& cell : report.cells) ++counts[cell.verdict.kind];
  std::vector<std::string> parts;
  for (const auto& [kind, count] : counts) parts.push_back(fmt::format("{} {}", count, to_string(kind)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

FailOn report_fail_on(const Report& report) {
  const auto it = report.config.find("fail_on");
  const auto parsed =
      it != report.config.end() && it->is_string() ? fail_on_from_string(it->get<std::string>()) : std::nullopt;
  return parsed.value_or(FailOn::contradiction);
}

}  // namespace repro_audit
