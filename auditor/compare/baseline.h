#pragma once
// Baselines: what later audits are held against, kept in git as YAML. A report and a baseline both
// reduce to a Snapshot, the one shape `compare` and `gate` read.
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/model_spec.h"
#include "report/report.h"

namespace repro_audit {

// /2 keys cells by rule 2 (plan/cell_key.h); a /1 baseline still loads, its keys migrated on the way in.
inline constexpr const char* kBaselineSchema = "repro-audit.baseline/2";
inline constexpr const char* kBaselineSchemaV1 = "repro-audit.baseline/1";

// The records of one kernel sequence (name, grid, block), shared by every cell that ran it.
using KernelSequence = std::shared_ptr<const std::vector<KernelRecord>>;

// One cell as compare sees it: only what a baseline keeps, plus the message when a report has it.
struct SnapshotCell {
  std::string key;  // cell_key(): probe/variant@device|non-default-setting=value,...
  VerdictKind verdict = VerdictKind::error;
  std::string digest;         // the agreed digest; empty when runs diverged or none ran
  std::string kernel_digest;  // the agreed kernel-sequence digest; empty when untraced or varied
  bool kernels_varied = false;
  Timing timing;        // median and spread (p10, p90); samples 0 when untimed
  std::string message;  // verdict message (reports only: baselines stay small and stable)
  // The records of the sequence kernel_digest names; null when not recorded (untraced, or a baseline
  // written before they were kept). A baseline keeps each sequence once, under `kernels`.
  KernelSequence kernels;
  // The digest of the inputs the probe made (the first process's); empty when not recorded (files
  // written before baselines kept it). Equal inputs on both sides: other bits come from the op.
  std::string input_digest;
  // py cells: each random source the step drew from and how it was seeded ("numpy.random not seeded
  // alike, torch (cpu) seeded by repro-audit"); empty when none was drawn or not recorded.
  std::string random_sources;
};

// What a baseline keeps of kernel records. A tracer keeps at most 1000 records per run
// (trace/tracer.h): four times that leaves room. Demangled CUDA template names run to a few thousand
// characters. The writer leaves out a sequence the reader would refuse, so its cells have no names.
inline constexpr std::size_t kMaxBaselineKernelRecords = 4096;
inline constexpr std::size_t kMaxKernelNameBytes = 16384;
inline constexpr std::size_t kMaxKernelLaunchBytes = 64;  // a grid or block, "x,y,z"

// Why a baseline cannot keep `record` (too long, a control character), or "" when it can.
std::string kernel_record_problem(const KernelRecord& record);

struct Snapshot {
  std::string source;  // the file it came from, for messages
  std::string tool_version;
  InputScheme input_scheme = kUnrecordedInputScheme;  // how its inputs were made: digests mean nothing without it
  nlohmann::json environment = nlohmann::json::object();
  std::vector<SnapshotCell> cells;  // in the report's order; keys unique
  std::vector<ModelSpec> models;    // a report's models, so `explain` can run their cells again (not in YAML)
};

// A baseline is a snapshot written to YAML: the same fields, no separate model to keep in step.
using Baseline = Snapshot;

Baseline baseline_from_report(const Report& report, const std::string& source = "");

// A cell's random sources in one line, for a baseline and `compare`: "" when none was drawn.
std::string random_sources_summary(const std::vector<RandomSourceVerdict>& sources);

std::string baseline_to_yaml(const Baseline& baseline);
// Writes atomically; throws UserError when the file cannot be written.
void write_baseline_file(const Baseline& baseline, const std::string& path);

// Throws UserError naming source:line:column for bad YAML, a wrong schema or unknown fields. Reads
// schema /1 too, migrating every key to the current rule (an error if two keys become one).
Baseline parse_baseline(const std::string& text, const std::string& source);
Baseline load_baseline_file(const std::string& path);

// A report (JSON) or a baseline (YAML), told apart by content, not by file name.
Snapshot load_comparable(const std::string& path);

const SnapshotCell* find_snapshot_cell(const Snapshot& snapshot, const std::string& key);

// Runs agreed bitwise: deterministic, invariant or varies, or warn-only with agreeing digests.
bool is_reproducible(const SnapshotCell& cell);
// The bits are not the same every time: nondeterministic, warn-only with diverging digests, or an
// invariance probe whose perturbed results vary (invariant -> varies is NEW-NONDETERMINISM).
bool is_diverging(const SnapshotCell& cell);
// The cell never produced a verdict on its bits: error, crashed, timeout.
bool is_broken(const SnapshotCell& cell);

}  // namespace repro_audit
