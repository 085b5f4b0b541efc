#include "kind/cell_kind.h"
#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace repro_audit {

void fill_cost_ratios(std::vector<CellReport>& cells) {
  // A cell's reference: the same cell under the default profile with its process-wide settings (threads,
  // an ISA cap), or, where the audit has no such cell, with every setting a profile names back at its
  // default (strict's CUBLAS_WORKSPACE_CONFIG is process-wide: on CUDA strict's only reference is the
  // default). A cell is never its own reference: the default column has no cost.
  static const std::set<std::string> switched = [] {
    std::set<std::string> names;
    for (const auto& [profile, settings] : profiles())
      for (const auto& [name, value] : settings) names.insert(name);
    return names;
  }();
  auto same_process = [](const Cell& cell) {
    FlagSet overrides = process_settings(cell.settings);
    if (const auto seed = cell.settings.find("seed"); seed != cell.settings.end()) overrides["seed"] = seed->second;
    return cell_key(cell.probe, cell.variant, cell.device, make_flag_set(overrides, cell.device));
  };
  auto all_defaults = [](const Cell& cell) {
    FlagSet kept;
    for (const auto& [name, value] : cell.settings)
      if (!switched.count(name)) kept[name] = value;
    return cell_key(cell.probe, cell.variant, cell.device, make_flag_set(kept, cell.device));
  };
  std::map<std::string, const Timing*> default_timings;
  for (const auto& report : cells)
    if (report.verdict.timing.samples > 0) default_timings[report.cell.key] = &report.verdict.timing;
  for (auto& report : cells) {
    report.cost.reset();
    for (const auto& reference : {same_process(report.cell), all_defaults(report.cell)}) {
      if (reference == report.cell.key) continue;
      if (const auto it = default_timings.find(reference); it != default_timings.end()) {
        report.cost = cost_ratio(report.verdict.timing, *it->second);
        break;
      }
    }
  }
}

// Two deterministic cells of a variant whose bits differ and whose settings differ in one setting
// only: that setting changes the bits. Comparing every pair of cells was quadratic; instead each cell
// goes, once per setting, into the bucket of cells equal to it in everything but that setting.
std::vector<SettingNote> find_setting_notes(const std::vector<CellReport>& cells) {
  struct Member {
    const std::string* value;
    const std::string* digest;
  };
  struct Bucket {
    const Cell* first = nullptr;
    const std::string* setting = nullptr;
    std::vector<Member> members;
  };
  std::unordered_map<std::string, Bucket> buckets;
  auto append = [](std::string& key, const std::string& text) {  // length-prefixed: no text can fake a boundary
    key += std::to_string(text.size());
    key += ':';
    key += text;
  };
  for (const auto& report : cells) {
    if (report.verdict.kind != VerdictKind::deterministic) continue;
    const auto& cell = report.cell;
    for (const auto& [setting, value] : cell.settings) {
      std::string key;
      for (const auto* part : {&cell.probe, &cell.variant, &cell.device, &setting}) append(key, *part);
      for (const auto& [name, other] : cell.settings) {
        append(key, name);
        if (name != setting) append(key, other);
      }
      auto& bucket = buckets[key];
      if (!bucket.first) bucket = {&cell, &setting, {}};
      bucket.members.push_back({&value, &report.verdict.digest});
    }
  }
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> changing;
  for (const auto& [key, bucket] : buckets) {
    if (bucket.members.size() < 2) continue;
    // A member's value changes the bits when another member has both another value and another
    // digest: by inclusion-exclusion, those are all but the ones sharing its value or its digest.
    std::unordered_map<std::string_view, std::size_t> by_value, by_digest;
    std::map<std::pair<std::string_view, std::string_view>, std::size_t> by_both;
    for (const auto& member : bucket.members) {
      ++by_value[*member.value];
      ++by_digest[*member.digest];
      ++by_both[{*member.value, *member.digest}];
    }
    for (const auto& member : bucket.members) {
      const auto others = bucket.members.size() + by_both[{*member.value, *member.digest}] - by_value[*member.value] -
                          by_digest[*member.digest];
      if (others > 0)
        changing[{bucket.first->probe, bucket.first->variant, bucket.first->device, *bucket.setting}].insert(
            *member.value);
    }
  }
  std::vector<SettingNote> notes;
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
  return build_report(plan, observations, [&](const Cell& cell) {
    const auto* probe = find_probe(catalogue, cell.probe);
    return kind_of(cell).documented(cell, probe);
  });
}

Report build_report(const Plan& plan, const std::map<std::string, std::vector<ProcessObservation>>& observations,
                    const std::function<Documented(const Cell&)>& documented_of) {
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
    const auto documented = documented_of(cell);
    cell_report.documented = to_string(documented);
    cell_report.contradiction = find_contradiction(documented, cell.settings, cell_report.verdict);
    // A model's forward that raises, or inputs it does not take, is the model's error.
    if (cell_report.contradiction && cell_report.contradiction->expected == kExpectedVerdict && cell.model)
      cell_report.contradiction->text.replace(0, std::string_view("the probe").size(), "the model");
    report.cells.push_back(std::move(cell_report));
  }
  fill_cost_ratios(report.cells);
  report.notes = find_setting_notes(report.cells);
  report.portability = find_portability(report.cells);
  return report;
}

std::string nothing_audited_reason(const Report& report) {
  if (report.cells.empty() && report.shard)
    return fmt::format("shard {}/{} holds none of the plan's {} cells", report.shard->index, report.shard->count,
                       report.shard->plan.size());
  if (report.cells.empty()) return "the plan has no cells";
  std::set<std::string> reasons;
  for (const auto& cell : report.cells) {
    if (!is_skipped(cell.verdict)) return "";
    reasons.insert(cell.verdict.message.empty() ? cell.cell.unsupported_reason : cell.verdict.message);
  }
  std::string text = report.cells.size() == 1
                         ? std::string("its only cell was skipped")
                         : fmt::format("every one of the {} cells was skipped", report.cells.size());
  std::size_t shown = 0;
  for (const auto& reason : reasons) {
    if (reason.empty()) continue;
    text += (shown == 0 ? ": " : "; ") + reason;
    if (++shown == 3) break;
  }
  return text;
}

bool audit_failed(const Report& report, FailOn fail_on) {
  for (const auto& cell : report.cells) {
    if (cell.contradiction && cell.contradiction->breaks_audit) return true;
    if (fail_on == FailOn::any && is_failing(cell.verdict)) return true;
  }
  return false;
}

const CellReport* find_cell(const Report& report, const std::string& key) {
  for (const auto& cell : report.cells)
    if (cell.cell.key == key) return &cell;
  return nullptr;
}

InputScheme input_scheme_of(const Report& report) {
  if (!report.config.is_object()) return kUnrecordedInputScheme;
  const auto it = report.config.find("input_scheme");
  if (it == report.config.end() || !it->is_number_integer()) return kUnrecordedInputScheme;
  return input_scheme_from_int(it->get<long long>()).value_or(kUnrecordedInputScheme);
}

}  // namespace repro_audit
