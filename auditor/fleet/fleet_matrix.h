#pragma once
// The fleet matrix: reports of many hosts, grouped by platform, cell by cell: which hosts' bits
// agree, whether a cell is portable across the whole fleet, and which fingerprint field separates
// the hosts that disagree. Torch-free.
#include <string>
#include <utility>
#include <vector>

#include "report/json_io.h"

namespace repro_audit {

inline constexpr const char* kFleetSchema = "repro-audit.fleet/1";

// A platform's fingerprint: every field that counts for the platform (compare/platform.h), label -> value.
using PlatformFields = std::vector<std::pair<std::string, std::string>>;

struct FleetHost {
  std::string name;  // the report's host; else its file name; made unique
  std::string file;
  int platform = 0;  // index into FleetMatrix::platforms
};

struct FleetPlatform {
  std::string label;    // "P1"
  std::string summary;  // "GPU NVIDIA A100, driver 12.8, CUDA 12.8, cuDNN 9.1, torch 2.14.1, AVX2"
  PlatformFields fields;
  std::vector<int> hosts;
};

// One host's result for one cell.
struct FleetEntry {
  // "digest" (runs agreed), "nondeterministic" (runs disagreed, warn-only mode's too), another verdict
  // name ("raises", "unsupported", "error", ...), or "absent" (the report has no such cell).
  std::string state;
  std::string digest;  // when state is "digest"
  int group = -1;      // index of the digest group (0 = most hosts), when state is "digest"
};

// portable: every host that ran the cell (that has it and did not skip it) has the same bits, two at
// least. split: two hosts at least have bits, and another host has other bits, or raised or failed.
// nondeterministic: the runs disagreed on some host. not_comparable: fewer than two hosts have bits.
enum class FleetCategory { portable, split, nondeterministic, not_comparable };
const char* to_string(FleetCategory category);  // portable | split | nondeterministic | not-comparable

struct FleetCell {
  std::string key;
  std::vector<FleetEntry> entries;  // one per host, in FleetMatrix::hosts order
  int groups = 0;                   // distinct digests among hosts whose runs agreed
  int hosts_with_cell = 0;          // hosts whose report has the cell, skipped or not
  int hosts_skipped = 0;            // ... of which skipped it (unsupported there): they count as lacking it
  FleetCategory category = FleetCategory::not_comparable;
  // split: the field that separates the groups, "" when no single field does. A host that raised or
  // failed is a group of its own here (it disagrees); one that skipped the cell is left out.
  std::string field;
  bool exact = false;      // the field's values and the groups correspond one to one
  std::string separation;  // "differs exactly where CUDA driver differs", ...; "" when portable
};

// A report left out because it is another copy of a host's report: the same run (identical content,
// whatever its file name), or another audit of a host already in the fleet (the same non-empty host
// name on the same platform). One host counts once: two copies are not "the same bits on 2 hosts".
struct FleetDuplicate {
  std::string file;
  std::string same_as;  // the earlier file it repeats: the first copy of the run, or the host's file
  std::string why;      // "the same run", "another audit of host gpu-7"
};

struct FleetMatrix {
  std::vector<FleetDuplicate> duplicates;  // before `hosts`: only those counted are hosts
  std::vector<FleetHost> hosts;
  std::vector<FleetPlatform> platforms;
  std::vector<FleetCell> cells;  // in the first report's order, then new keys in order of appearance
  int compared = 0;              // cells that at least two hosts ran with agreeing runs
};

FleetMatrix build_fleet(const std::vector<ReportFile>& inputs);

// "12 cells portable fleet-wide", "3 split by CUDA driver", ...: the summary, one phrase each, after
// a phrase per report left out ("b.json left out: the same run as a.json (one host counts once)").
std::vector<std::string> fleet_summary(const FleetMatrix& fleet);

}  // namespace repro_audit
