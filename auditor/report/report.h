#pragma once
// Everything one audit observed: plain values that every printer reads.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "config/config.h"
#include "config/documentation.h"
#include "plan/plan.h"
#include "report/portability.h"
#include "verdict/verdict.h"

namespace repro_audit {

// /2 keys cells by rule 2 (plan/cell_key.h); a /1 report still loads, its keys rebuilt from each
// cell's settings on the way in.
inline constexpr const char* kReportSchema = "repro-audit.report/2";
inline constexpr const char* kReportSchemaV1 = "repro-audit.report/1";

struct CellReport {
  Cell cell;
  Verdict verdict;
  std::string documented;  // what PyTorch documents for the probe on this device
  std::optional<Contradiction> contradiction;
  // Median over the default profile's median (same device and threads), with its 95% interval.
  std::optional<CostRatio> cost;
  std::vector<ProcessObservation> observations;
};

// A setting whose value changes the bits of a variant's deterministic cells.
struct SettingNote {
  std::string probe;
  std::string variant;
  std::string device;
  std::string setting;
  std::vector<std::string> values;
  std::string text;
};

// Which part of a sharded audit's plan a report holds (plan/shard.h makes the partition).
struct ShardInfo {
  int index = 1;  // 1..count
  int count = 1;
  std::string source;             // where K/N came from: "--shard", "slurm", "kubernetes", "env"
  std::string balance;            // what balanced the shards: "declared weights", "timings from FILE"
  std::vector<std::string> plan;  // every cell key of the whole plan, in plan order
};

// A report made by `merge`: what it was made of, and the shards that were missing (--allow-partial).
struct MergedReport {
  std::string file;
  std::string host;
  std::string shard;  // "2/3"; "1/1" for an unsharded report
  int cells = 0;
};
struct MergeInfo {
  std::vector<MergedReport> reports;
  std::vector<std::string> missing_shards;  // "2/3"
  std::vector<std::string> missing_cells;   // keys of the plan no report held
};

struct Report {
  std::string tool_version;
  std::string host;  // the machine's host name; "" in reports of earlier versions
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json config = nlohmann::json::object();
  std::string device;
  std::vector<std::string> columns;
  std::vector<CellReport> cells;
  std::vector<SettingNote> notes;
  std::vector<Portability> portability;  // derived from the cells, like the notes
  double duration_seconds = 0;
  bool complete = true;            // false: the audit was interrupted; only finished cells are here
  std::string incomplete;          // why a loaded report counts as interrupted when it does not say so
  std::optional<ShardInfo> shard;  // set when the audit ran one shard of its plan
  std::optional<MergeInfo> merge;  // set by `merge`
  // Which torch's documentation the cells' `documented` came from; absent in reports of earlier versions.
  std::optional<DocumentationSource> documentation;
};

// Judges every cell, finds contradictions, cost ratios and cross-setting notes.
Report build_report(const Plan& plan, const std::map<std::string, std::vector<ProcessObservation>>& observations,
                    const Catalogue& catalogue);
// The same with what PyTorch documents for each cell given directly (`merge`: taken from the reports).
Report build_report(const Plan& plan, const std::map<std::string, std::vector<ProcessObservation>>& observations,
                    const std::function<Documented(const Cell&)>& documented_of);

std::vector<SettingNote> find_setting_notes(const std::vector<CellReport>& cells);

// Each cell's cost against the cell of the default profile with its process settings and seed.
void fill_cost_ratios(std::vector<CellReport>& cells);

// Exit-code rule: a contradiction that breaks the audit (default), or any failing cell (`any`).
bool audit_failed(const Report& report, FailOn fail_on);

// Why a report is not of a whole audit ("the audit was interrupted"); empty when it is.
inline std::string incomplete_reason(const Report& report) {
  if (report.complete) return "";
  return report.incomplete.empty() ? "the audit was interrupted" : report.incomplete;
}

// Why nothing was audited (every cell skipped, or none planned); empty when some cell ran.
std::string nothing_audited_reason(const Report& report);

const CellReport* find_cell(const Report& report, const std::string& key);

// How the audit made its inputs (its config's input_scheme); reports that record none: ATen's generator.
InputScheme input_scheme_of(const Report& report);

}  // namespace repro_audit
