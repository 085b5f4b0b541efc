#include "explain/cell_sides.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "explain/library_keys.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

// Whether both sides' probes made the same inputs: another scheme, or another input digest, means
// the bits were taken over other values.
std::string inputs_text(const Snapshot& before, const Snapshot& after, const CellComparison& compared) {
  if (before.input_scheme != after.input_scheme)
    return fmt::format("different: input scheme {} vs {}", describe(before.input_scheme), describe(after.input_scheme));
  const auto& a = compared.before->input_digest;
  const auto& b = compared.after->input_digest;
  if (a.empty() || b.empty()) {
    const auto side = a.empty() && b.empty() ? "either" : a.empty() ? "BEFORE" : "AFTER";
    const auto& scheme = a.empty() ? before.input_scheme : after.input_scheme;
    return fmt::format("not recorded in {}{}", side,
                       scheme == InputScheme::aten
                           ? "; they came from ATen's generator, whose values differ between some ISA levels"
                           : "");
  }
  if (a == b) return "equal";
  return fmt::format("different (input digest {} -> {})", short_digest(a), short_digest(b));
}

std::string kernels_text(const CellComparison& compared) {
  const auto& before = *compared.before;
  const auto& after = *compared.after;
  if (before.kernel_digest.empty() || after.kernel_digest.empty()) return "not traced on both sides";
  if (before.kernel_digest == after.kernel_digest) return "the same";
  if (compared.kernel_changes.empty())
    return fmt::format("changed ({} -> {}; names not recorded in {})", short_digest(before.kernel_digest),
                       short_digest(after.kernel_digest),
                       !before.kernels && !after.kernels ? "either"
                       : !before.kernels                 ? "BEFORE"
                                                         : "AFTER");
  std::vector<std::string> parts;
  for (const auto& change : compared.kernel_changes) parts.push_back(kernel_change_text(change));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

// What changed besides the bits: inputs, kernels by name, and where their libraries look.
void describe_sides(CellExplanation& cell, const Snapshot& before, const Snapshot& after, const Comparison& comparison,
                    const CellComparison& compared) {
  cell.inputs = inputs_text(before, after, compared);
  cell.kernels = kernels_text(compared);
  cell.kernel_changes = compared.kernel_changes;
  std::vector<std::string> libraries;
  for (const auto& change : compared.kernel_changes)
    if (std::find(libraries.begin(), libraries.end(), change.library) == libraries.end())
      libraries.push_back(change.library);
  for (const auto& library : libraries) {
    cell.keyed_on.push_back(keyed_on_text(library, comparison.environment_changes));
    cell.library_pins.push_back(fmt::format("{}: {}", library, library_keys(library).pin));
  }
}

// "1.42x slower here (3.10 ms vs 2.18 ms)", or no cost when the spreads overlap.
std::string cost_text(const Timing& as_is, const Timing& pinned) {
  if (as_is.samples <= 0 || pinned.samples <= 0 || as_is.median_ns <= 0) return "not measured (untimed)";
  const double ratio = static_cast<double>(pinned.median_ns) / static_cast<double>(as_is.median_ns);
  const auto medians = fmt::format("median {} vs {} as is, {} and {} runs", format_duration(pinned.median_ns),
                                   format_duration(as_is.median_ns), pinned.samples, as_is.samples);
  if (is_slower(as_is, pinned, 0.10)) return fmt::format("{:.2f}x slower here ({})", ratio, medians);
  if (is_faster(as_is, pinned, 0.10)) return fmt::format("{:.2f}x faster here ({})", ratio, medians);
  return fmt::format("no cost outside the noise here ({:.2f}x, {})", ratio, medians);
}

}  // namespace repro_audit
