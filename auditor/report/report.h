#pragma once
// Everything one audit observed: plain values that every printer reads.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "config/config.h"
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
  std::optional<double> cost_ratio;  // median over the default profile's median, same device and threads
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

struct Report {
  std::string tool_version;
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json config = nlohmann::json::object();
  std::string device;
  std::vector<std::string> columns;
  std::vector<CellReport> cells;
  std::vector<SettingNote> notes;
  std::vector<Portability> portability;  // derived from the cells, like the notes
  double duration_seconds = 0;
  bool complete = true;  // false: the audit was interrupted; only finished cells are here
};

// Judges every cell, finds contradictions, cost ratios and cross-setting notes.
Report build_report(const Plan& plan, const std::map<std::string, std::vector<ProcessObservation>>& observations,
                    const Catalogue& catalogue);

std::vector<SettingNote> find_setting_notes(const std::vector<CellReport>& cells);

// Exit-code rule: a contradiction that breaks the audit (default), or any failing cell (`any`).
bool audit_failed(const Report& report, FailOn fail_on);

// Why nothing was audited (every cell skipped, or none planned); empty when some cell ran.
std::string nothing_audited_reason(const Report& report);

const CellReport* find_cell(const Report& report, const std::string& key);

}  // namespace repro_audit
