#include "report/text_format.h"

#include "kind/cell_kind.h"

#include "config/config.h"
#include "report/escape.h"

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

// A fingerprint's value as one line: it comes from another host's report, and every printer shows it.
std::string text_of(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return terminal_text(value.get<std::string>());
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

std::string yes_no(const json& value) {
  if (!value.is_boolean()) return text_of(value);
  return value.get<bool>() ? "yes" : "no";
}

std::string on_off(const json& value) {
  if (!value.is_boolean()) return text_of(value);
  return value.get<bool>() ? "on" : "off";
}

// GiB with one decimal: the marketing size ("80GB") is in the name already.
std::string gibibytes(const json& value) {
  if (!value.is_number()) return text_of(value);
  return fmt::format("{:.1f} GiB", value.get<double>() / (1024.0 * 1024.0 * 1024.0));
}

// "NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0)" per device; "none" for a recorded empty list.
std::string gpus(const json& cuda) {
  std::vector<std::string> names;
  const auto& devices = field(cuda, "devices");
  if (!devices.is_array()) return "";
  if (devices.empty()) return "none";
  for (const auto& device : devices) {
    std::vector<std::string> details;
    if (const auto& sm_count = field(device, "sm_count"); !sm_count.is_null())
      details.push_back(fmt::format("{} SMs", text_of(sm_count)));
    if (const auto& capability = field(device, "compute_capability"); !capability.is_null())
      details.push_back("cc " + text_of(capability));
    auto name = text_of(field(device, "name"));
    if (!details.empty()) name += fmt::format(" ({})", fmt::join(details, ", "));
    names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// One value per device, "?" where a device lacks the key; "" when none has it (not recorded, e.g.
// ECC without NVML).
std::string device_values(const json& cuda, const char* key, std::string (*text)(const json&)) {
  const auto& devices = field(cuda, "devices");
  if (!devices.is_array()) return "";
  std::vector<std::string> values;
  bool recorded = false;
  for (const auto& device : devices) {
    const auto& value = field(device, key);
    recorded = recorded || !value.is_null();
    values.push_back(value.is_null() ? "?" : text(value));
  }
  return recorded ? fmt::format("{}", fmt::join(values, ", ")) : "";
}

// "AuthenticAMD family 25 model 17 stepping 1": what tells two CPUs of one model name apart.
std::string cpu_id(const json& environment) {
  std::vector<std::string> parts;
  if (const auto& vendor = field(environment, "cpu_vendor"); !vendor.is_null()) parts.push_back(text_of(vendor));
  for (const auto& [word, key] :
       {std::pair{"family", "cpu_family"}, {"model", "cpu_model"}, {"stepping", "cpu_stepping"}})
    if (const auto& value = field(environment, key); !value.is_null())
      parts.push_back(fmt::format("{} {}", word, text_of(value)));
  return fmt::format("{}", fmt::join(parts, " "));
}

EnvironmentField scalar_field(std::string label, std::string value) {
  EnvironmentField result;
  result.label = std::move(label);
  result.value = std::move(value);
  return result;
}

// A list compared as a set: its order carries no meaning (flags, capabilities).
EnvironmentField set_field(const char* label, std::vector<std::string> members, const char* separator) {
  EnvironmentField result;
  result.label = label;
  result.is_set = true;
  result.value = members.empty() ? "none" : fmt::format("{}", fmt::join(members, separator));
  result.members = std::move(members);
  return result;
}

EnvironmentField list_field(const char* label, const json& list) {
  if (!list.is_array()) return scalar_field(label, text_of(list));
  std::vector<std::string> members;
  for (const auto& item : list) members.push_back(text_of(item));
  return set_field(label, std::move(members), " ");
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

std::vector<EnvironmentField> environment_fields(const json& environment) {
  const auto& cuda = field(environment, "cuda");
  auto text = [&](const char* key) { return text_of(field(environment, key)); };
  std::vector<EnvironmentField> fields = {
      scalar_field("torch", text("torch")),
      scalar_field("torch git", text("torch_git")),
      scalar_field("torch CUDA build", yes_no(field(environment, "torch_cuda_build"))),
      scalar_field("Python", text("python")),  // py cells' interpreter and the torch it imports
      scalar_field("Python torch", text("python_torch")),
      scalar_field("Python torch path", text("python_torch_path")),
      scalar_field("CUDA runtime", cuda_version(field(cuda, "runtime"))),
      scalar_field("CUDA compiled runtime", cuda_version(field(cuda, "compiled_runtime"))),
      scalar_field("CUDA driver", cuda_version(field(cuda, "driver"))),
      scalar_field("CUDA available", yes_no(field(cuda, "available"))),
      scalar_field("CUDA unavailable", text_of(field(cuda, "reason"))),
      scalar_field("cuDNN", cudnn_version(field(cuda, "cudnn"))),
      scalar_field("cuBLAS", text_of(field(cuda, "cublas"))),
      scalar_field("NCCL", text_of(field(cuda, "nccl"))),
      scalar_field("GPU", gpus(cuda)),
      scalar_field("GPU memory", device_values(cuda, "memory_bytes", gibibytes)),
      scalar_field("GPU ECC", device_values(cuda, "ecc", on_off)),
      scalar_field("GPU MIG", device_values(cuda, "mig", on_off)),
      scalar_field("NVML", text_of(field(cuda, "nvml"))),
      scalar_field("NVML unavailable", text_of(field(cuda, "nvml_unavailable"))),
      scalar_field("CPU", text("cpu")),
      scalar_field("CPU id", cpu_id(environment)),
      list_field("CPU flags", field(environment, "cpu_flags")),
      scalar_field("machine", text("machine")),
      scalar_field("ATen capability", text("aten_cpu_capability")),
      list_field("ATen capabilities", field(environment, "aten_cpu_capabilities")),
      scalar_field("BLAS", text("blas")),
      scalar_field("MKL", text("mkl")),
      scalar_field("oneDNN", text("onednn")),
      scalar_field("OpenMP", text("openmp")),
      scalar_field("threads", text("threads")),
      scalar_field("interop threads", text("interop_threads")),
      scalar_field("logical CPUs", text("logical_cpus")),
  };
  const auto& variables = field(environment, "numerics_environment");
  if (variables.is_object())
    for (const auto& [name, value] : variables.items())
      fields.push_back(scalar_field(std::string(kVariableLabelPrefix) + terminal_text(name), text_of(value)));
  fields.push_back(scalar_field("OS", text("os")));
  fields.push_back(scalar_field("tool", text("tool_version")));
  fields.push_back(scalar_field("fingerprint", text("fingerprint")));
  // Where each fact came from (`sources`) is no fact about the machine: `repro-audit env --text` shows it.
  return fields;
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
    legend.push_back({"~1.0x", "no measurable cost: the 95% interval of the ratio contains 1", ""});
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
