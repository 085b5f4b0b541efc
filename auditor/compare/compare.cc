#include "compare/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "compare/platform.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

const std::vector<std::pair<Change, const char*>> kNames = {
    {Change::missing, "MISSING"},
    {Change::added, "NEW"},
    {Change::broke, "BROKE"},
    {Change::new_nondeterminism, "NEW-NONDETERMINISM"},
    {Change::drift, "DRIFT"},
    {Change::fixed, "FIXED"},
    {Change::kernels_changed, "KERNELS-CHANGED"},
    {Change::slower, "SLOWER"},
    {Change::faster, "FASTER"},
    {Change::same, "SAME"},
};

std::string verdict_text(const SnapshotCell& cell) {
  std::string text = to_string(cell.verdict);
  if (!cell.message.empty() && (is_broken(cell) || cell.verdict == VerdictKind::raises))
    text += " (" + cell.message + ")";
  return text;
}

std::string timing_text(const Timing& before, const Timing& after) {
  const double percent = 100.0 * (static_cast<double>(after.median_ns) / static_cast<double>(before.median_ns) - 1.0);
  return fmt::format("median {} -> {} ({:+.0f}%; p10-p90 {}-{} -> {}-{})", format_duration(before.median_ns),
                     format_duration(after.median_ns), percent, format_duration(before.p10_ns),
                     format_duration(before.p90_ns), format_duration(after.p10_ns), format_duration(after.p90_ns));
}

// What happened to the bits: at most one of BROKE, NEW-NONDETERMINISM, DRIFT, FIXED.
void classify_verdict(const SnapshotCell& before, const SnapshotCell& after, CellComparison& result,
                      std::vector<std::string>& notes) {
  const auto verdict_change = fmt::format("verdict {} -> {}", to_string(before.verdict), verdict_text(after));
  const bool was_failing = is_diverging(before) || is_broken(before);
  if (is_broken(after) && !is_broken(before)) {
    result.changes.push_back(Change::broke);
    notes.push_back(verdict_change);
  } else if (is_diverging(after) && !is_diverging(before)) {
    result.changes.push_back(Change::new_nondeterminism);
    notes.push_back(verdict_change);
  } else if (is_reproducible(before) && is_reproducible(after) && is_diverging(before) == is_diverging(after) &&
             before.digest != after.digest) {
    result.changes.push_back(Change::drift);
    notes.push_back(fmt::format("digest {} -> {}", short_digest(before.digest), short_digest(after.digest)));
    if (!before.input_digest.empty() && !after.input_digest.empty() && before.input_digest != after.input_digest)
      notes.push_back(fmt::format("other inputs (input digest {} -> {})", short_digest(before.input_digest),
                                  short_digest(after.input_digest)));
  } else if (was_failing && !is_diverging(after) && (is_reproducible(after) || after.verdict == VerdictKind::raises)) {
    result.changes.push_back(Change::fixed);
    notes.push_back(verdict_change);
  } else if (before.verdict != after.verdict) {
    // E.g. deterministic -> raises, or -> unsupported: no class of its own, but worth reading.
    notes.push_back(verdict_change);
  }
  // py cells: a source drawn or seeded otherwise (a snapshot written before they were kept has none).
  if (before.random_sources != after.random_sources &&
      (!before.random_sources.empty() || after.random_sources.find("not seeded") != std::string::npos))
    notes.push_back(fmt::format("random sources: {} -> {}",
                                before.random_sources.empty() ? "none" : before.random_sources,
                                after.random_sources.empty() ? "none" : after.random_sources));
}

// The files the snapshots came from, to say which side kept no kernel names.
struct Sides {
  std::string before;
  std::string after;
};

// A detail line names this many kernel changes; the cell's kernel_changes hold them all.
constexpr std::size_t kKernelChangesInDetail = 3;

void describe_kernels(const SnapshotCell& before, const SnapshotCell& after, const Sides& sides, CellComparison& result,
                      std::vector<std::string>& notes) {
  const auto digests =
      fmt::format("kernels {} -> {}", short_digest(before.kernel_digest), short_digest(after.kernel_digest));
  if (!before.kernels || !after.kernels) {
    const auto* missing = !before.kernels && !after.kernels ? "either"
                          : !before.kernels                 ? sides.before.c_str()
                                                            : sides.after.c_str();
    notes.push_back(fmt::format("{} (names not recorded in {})", digests, missing));
    return;
  }
  result.kernel_changes = describe_kernel_changes(*before.kernels, *after.kernels);
  if (result.kernel_changes.empty()) return notes.push_back(digests);  // the records agree; the digests do not
  const auto& changes = result.kernel_changes;
  for (std::size_t i = 0; i < changes.size() && i < kKernelChangesInDetail; ++i)
    notes.push_back(kernel_change_text(changes[i]));
  if (changes.size() > kKernelChangesInDetail) {
    const auto more = changes.size() - kKernelChangesInDetail;
    notes.push_back(fmt::format("{} more kernel change{}", more, more == 1 ? "" : "s"));
  }
}

void classify_kernels(const SnapshotCell& before, const SnapshotCell& after, const Sides& sides, CellComparison& result,
                      std::vector<std::string>& notes) {
  if (!before.kernel_digest.empty() && !after.kernel_digest.empty() && before.kernel_digest != after.kernel_digest) {
    result.changes.push_back(Change::kernels_changed);
    describe_kernels(before, after, sides, result, notes);
  } else if (after.kernels_varied && !before.kernels_varied) {
    result.changes.push_back(Change::kernels_changed);
    notes.push_back("kernel selection now varies between runs");
  }
}

void classify_timing(const SnapshotCell& before, const SnapshotCell& after, double threshold, CellComparison& result,
                     std::vector<std::string>& notes) {
  if (before.timing.samples <= 0 || after.timing.samples <= 0 || before.timing.median_ns <= 0) return;
  if (is_slower(before.timing, after.timing, threshold))
    result.changes.push_back(Change::slower);
  else if (is_faster(before.timing, after.timing, threshold))
    result.changes.push_back(Change::faster);
  else
    return;
  notes.push_back(timing_text(before.timing, after.timing));
}

CellComparison compare_cell(const SnapshotCell* before, const SnapshotCell* after, const Sides& sides, double threshold,
                            bool compare_timing) {
  CellComparison result;
  result.key = after ? after->key : before->key;
  if (before) result.before = *before;
  if (after) result.after = *after;
  std::vector<std::string> notes;
  if (!after) {
    result.changes = {Change::missing};
    notes.push_back("was " + verdict_text(*before));
  } else if (!before) {
    result.changes = {Change::added};
    if (is_broken(*after)) result.changes.push_back(Change::broke);
    notes.push_back("now " + verdict_text(*after));
  } else {
    classify_verdict(*before, *after, result, notes);
    if (!is_broken(*after)) {
      classify_kernels(*before, *after, sides, result, notes);
      if (compare_timing) classify_timing(*before, *after, threshold, result, notes);
    }
    if (result.changes.empty()) result.changes = {Change::same};
  }
  result.detail = fmt::format("{}", fmt::join(notes, "; "));
  return result;
}

}  // namespace

const char* to_string(Change change) {
  for (const auto& [c, name] : kNames)
    if (c == change) return name;
  return "?";
}

std::optional<Change> change_from_string(const std::string& text) {
  for (const auto& [c, name] : kNames)
    if (text == name) return c;
  return std::nullopt;
}

const std::vector<Change>& all_changes() {
  static const std::vector<Change> changes = [] {
    std::vector<Change> list;
    for (const auto& entry : kNames) list.push_back(entry.first);
    return list;
  }();
  return changes;
}

bool CellComparison::has(Change change) const {
  return std::find(changes.begin(), changes.end(), change) != changes.end();
}

bool is_slower(const Timing& before, const Timing& after, double threshold) {
  return static_cast<double>(after.p10_ns) > static_cast<double>(before.p90_ns) * (1.0 + threshold);
}

bool is_faster(const Timing& before, const Timing& after, double threshold) {
  return is_slower(after, before, threshold);
}

Comparison compare_snapshots(const Snapshot& before, const Snapshot& after, const CompareOptions& options) {
  Comparison comparison;
  comparison.before_source = before.source;
  comparison.after_source = after.source;
  comparison.slower_threshold = options.slower_threshold;
  comparison.environment_changes = environment_changes(before.environment, after.environment);
  // Other inputs give other digests whatever the platform: counted like a platform change (DRIFT warns).
  if (before.input_scheme != after.input_scheme) {
    EnvironmentChange inputs;
    inputs.field = "input scheme";
    inputs.before = describe(before.input_scheme);
    inputs.after = describe(after.input_scheme);
    inputs.difference = inputs.before + " -> " + inputs.after + " (other inputs: digests not comparable)";
    inputs.platform = true;
    comparison.environment_changes.insert(comparison.environment_changes.begin(), std::move(inputs));
  }
  comparison.platform_changed = is_platform_change(comparison.environment_changes);
  comparison.platform_summary =
      platform_summary(comparison.environment_changes, comparison.before_source, comparison.after_source);
  comparison.timing_compared = !comparison.platform_changed || options.timing_across_platforms;
  if (!comparison.timing_compared)
    comparison.timing_note =
        "Timings not compared: the platforms differ (--compare-timing-across-platforms compares them).";
  else if (comparison.platform_changed)
    comparison.timing_note =
        "Timings compared across platforms on request: SLOWER and FASTER may be the machines, not the change.";

  const Sides sides{before.source.empty() ? "before" : before.source, after.source.empty() ? "after" : after.source};
  // Hashed views of the keys: snapshots of a million cells, without a copy of every key.
  std::unordered_map<std::string_view, const SnapshotCell*> old_cells;
  for (const auto& cell : before.cells) old_cells[cell.key] = &cell;
  std::unordered_set<std::string_view> new_keys;
  comparison.cells.reserve(after.cells.size());
  for (const auto& cell : after.cells) {
    new_keys.insert(cell.key);
    auto it = old_cells.find(cell.key);
    comparison.cells.push_back(compare_cell(it == old_cells.end() ? nullptr : it->second, &cell, sides,
                                            options.slower_threshold, comparison.timing_compared));
  }
  for (const auto& cell : before.cells)
    if (!new_keys.count(cell.key))
      comparison.cells.push_back(
          compare_cell(&cell, nullptr, sides, options.slower_threshold, comparison.timing_compared));
  return comparison;
}

std::vector<std::pair<Change, int>> count_headlines(const Comparison& comparison) {
  std::map<Change, int> counts;
  for (const auto& cell : comparison.cells) ++counts[cell.changes.front()];
  std::vector<std::pair<Change, int>> result;
  for (auto change : all_changes())
    if (counts.count(change)) result.emplace_back(change, counts[change]);
  return result;
}

std::string probe_of_key(const std::string& key) { return key.substr(0, key.find('/')); }

int count_compared(const Comparison& comparison) {
  int compared = 0;
  for (const auto& cell : comparison.cells)
    if (cell.before && cell.after && cell.before->verdict != VerdictKind::unsupported &&
        cell.after->verdict != VerdictKind::unsupported)
      ++compared;
  return compared;
}

}  // namespace repro_audit
