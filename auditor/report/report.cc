#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

namespace repro_audit {
namespace {

void fill_cost_ratios(std::vector<CellReport>& cells) {
  // The default profile's flag set for a cell: the defaults, with the cell's process settings and seed.
  std::map<std::string, std::int64_t> default_medians;
  auto reference_key = [](const Cell& cell) {
    FlagSet overrides = process_settings(cell.settings);
    overrides["seed"] = cell.settings.at("seed");
    return cell_key(cell.probe, cell.variant, cell.device, make_flag_set(overrides, cell.device));
  };
  for (const auto& report : cells)
    if (report.verdict.timing.samples > 0) default_medians[report.cell.key] = report.verdict.timing.median_ns;
  for (auto& report : cells) {
    auto it = default_medians.find(reference_key(report.cell));
    if (it != default_medians.end() && it->second > 0 && report.verdict.timing.samples > 0)
      report.cost_ratio = static_cast<double>(report.verdict.timing.median_ns) / static_cast<double>(it->second);
  }
}

}  // namespace

std::vector<SettingNote> find_setting_notes(const std::vector<CellReport>& cells) {
  std::vector<SettingNote> notes;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> changing;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& a = cells[i];
    if (a.verdict.kind != VerdictKind::deterministic) continue;
    for (std::size_t j = i + 1; j < cells.size(); ++j) {
      const auto& b = cells[j];
      if (b.verdict.kind != VerdictKind::deterministic || a.cell.probe != b.cell.probe ||
          a.cell.variant != b.cell.variant || a.cell.device != b.cell.device || a.verdict.digest == b.verdict.digest)
        continue;
      // Two deterministic cells with different bits: note the setting when it is their only difference.
      std::vector<std::string> differing;
      bool comparable = b.cell.settings.size() == a.cell.settings.size();
      for (const auto& [name, value] : a.cell.settings) {
        auto other = b.cell.settings.find(name);
        if (other == b.cell.settings.end())
          comparable = false;  // not the same settings at all
        else if (other->second != value)
          differing.push_back(name);
      }
      if (!comparable) continue;
      if (differing.size() != 1) continue;
      auto& values = changing[{a.cell.probe, a.cell.variant, a.cell.device, differing[0]}];
      values.insert(a.cell.settings.at(differing[0]));
      values.insert(b.cell.settings.at(differing[0]));
    }
  }
  for (const auto& [where, values] : changing) {
    const auto& [probe, variant, device, setting] = where;
    std::vector<std::string> list(values.begin(), values.end());
    notes.push_back({probe, variant, device, setting, list,
                     fmt::format("{}/{}: {} {} give different bits (each deterministic on its own)", probe, variant,
                                 setting, fmt::join(list, " vs "))});
  }
  return notes;
}

Report build_report(const Plan& plan, const std::map<std::string, std::vector<ProcessObservation>>& observations,
                    const Catalogue& catalogue) {
  Report report;
  report.device = plan.device;
  for (const auto& column : plan.columns) report.columns.push_back(column.label);
  for (const auto& cell : plan.cells) {
    CellReport cell_report;
    cell_report.cell = cell;
    auto it = observations.find(cell.key);
    static const std::vector<ProcessObservation> none;
    const auto& seen = it == observations.end() ? none : it->second;
    cell_report.verdict = judge(cell, seen);
    cell_report.observations = seen;
    const auto* probe = find_probe(catalogue, cell.probe);
    const auto documented =
        probe ? probe->documented_on(cell.variant, device_kind(cell.device)) : Documented::deterministic;
    cell_report.documented = to_string(documented);
    cell_report.contradiction = find_contradiction(documented, cell.settings, cell_report.verdict);
    report.cells.push_back(std::move(cell_report));
  }
  fill_cost_ratios(report.cells);
  report.notes = find_setting_notes(report.cells);
  return report;
}

bool audit_failed(const Report& report, const std::string& fail_on) {
  for (const auto& cell : report.cells) {
    if (cell.contradiction && cell.contradiction->breaks_audit) return true;
    if (fail_on == "any" && is_failing(cell.verdict)) return true;
  }
  return false;
}

const CellReport* find_cell(const Report& report, const std::string& key) {
  for (const auto& cell : report.cells)
    if (cell.cell.key == key) return &cell;
  return nullptr;
}

}  // namespace repro_audit
