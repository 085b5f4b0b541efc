#pragma once
// What changed between two snapshots (reports or baselines): the environment first, then per cell.
#include <optional>
#include <string>
#include <vector>

#include "compare/baseline.h"
#include "compare/kernel_change.h"
#include "compare/platform.h"

namespace repro_audit {

// Per-cell classes, declared in precedence order: a cell lists its classes in this order and the
// first one is its headline. MISSING and NEW lead because nothing else is comparable; BROKE next,
// because a cell that no longer runs has no bits or timings worth judging; then what changed in the
// bits (new nondeterminism, drift, fix), then the kernels chosen, then time; SAME only alone.
enum class Change {
  missing,             // in the old snapshot only
  added,               // NEW: in the new snapshot only (may also be BROKE)
  broke,               // error, crash or timeout now, not before
  new_nondeterminism,  // runs disagree now, did not before
  drift,               // deterministic both times, different digest
  fixed,               // was diverging or broken, now deterministic (or raises under strict mode)
  kernels_changed,     // a different kernel sequence, or kernel selection now varies between runs
  slower,              // the whole p10-p90 spread moved beyond the threshold
  faster,
  same,
};

const char* to_string(Change change);  // "NEW-NONDETERMINISM", ...
std::optional<Change> change_from_string(const std::string& text);
const std::vector<Change>& all_changes();  // precedence order

struct CellComparison {
  std::string key;
  std::vector<Change> changes;  // precedence order, never empty
  std::optional<SnapshotCell> before;
  std::optional<SnapshotCell> after;
  std::string detail;  // what changed, one line, e.g. "digest 1a2b… -> 3c4d…; median 1.20 ms -> 1.50 ms (+25%)"
  // KERNELS-CHANGED with the records of both sequences: what changed, by library (compare/kernel_change.h).
  // Empty when a side kept no names: the detail then gives the digests and says which side.
  std::vector<KernelChange> kernel_changes;
  bool has(Change change) const;
};

struct CompareOptions {
  // 10%: CPU medians of sub-millisecond ops move a few percent between identical runs.
  double slower_threshold = 0.10;
  // Timings of two platforms say as much of the machines as of the change: compared only on request.
  bool timing_across_platforms = false;
};

struct Comparison {
  std::string before_source;
  std::string after_source;
  std::vector<EnvironmentChange> environment_changes;  // every field that differs (compare/platform.h)
  bool platform_changed = false;                       // a platform field differs or is recorded on one side only
  std::string platform_summary;       // "Platform changed: CPU flags -avx512f, ...", "Platform unchanged"
  std::vector<CellComparison> cells;  // the new snapshot's order, then cells missing from it
  double slower_threshold = 0.10;
  bool timing_compared = true;  // false: the platforms differ and no one asked to compare their timings
  std::string timing_note;      // says so when the platforms differ; "" when they do not
};

Comparison compare_snapshots(const Snapshot& before, const Snapshot& after, const CompareOptions& options = {});

// Slower: the new p10 lies beyond the old p90 by more than the threshold: the whole run-to-run spread
// moved. Not the medians' 95% intervals: they say how well one audit knows its median, not how far two
// audits of one machine drift apart (an A/A gate here raised SLOWER or FASTER on 16% of the cells with
// them, 1.5% with this rule). Faster: the same with the roles swapped. Faster: the same with the
// roles swapped, so swapping the snapshots swaps SLOWER and FASTER.
bool is_slower(const Timing& before, const Timing& after, double threshold);
bool is_faster(const Timing& before, const Timing& after, double threshold);

// Cells with a verdict on both sides (neither missing nor skipped): a gate or explanation that
// compared none has nothing to stand on.
int count_compared(const Comparison& comparison);

// Cells per headline class, in precedence order, only the classes that occur.
std::vector<std::pair<Change, int>> count_headlines(const Comparison& comparison);

// The probe of a cell key: the part before the first '/'.
std::string probe_of_key(const std::string& key);

}  // namespace repro_audit
