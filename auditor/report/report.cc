#include "kind/cell_kind.h"
#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
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

namespace {

// The deterministic cells as numbers, one per distinct text: each cell's row is its probe, variant and
// device, then each setting's name and value in the settings' order. Rows are compared and hashed
// without their text; they take a few bytes per setting, not a copy of every setting's text per setting.
class SettingRows {
 public:
  explicit SettingRows(const std::vector<CellReport>& cells) {
    for (const auto& report : cells) {
      if (report.verdict.kind != VerdictKind::deterministic) continue;
      const auto& cell = report.cell;
      rows_.push_back({&report, static_cast<std::uint32_t>(numbers_.size()), 0});
      auto& row = rows_.back();
      for (const auto* part : {&cell.probe, &cell.variant, &cell.device}) numbers_.push_back(number_of(*part));
      row.hash = pair_hash(numbers_[row.start], numbers_[row.start + 1]) + pair_hash(numbers_[row.start + 2], 0);
      for (const auto& [name, value] : cell.settings) {
        numbers_.push_back(number_of(name));
        numbers_.push_back(number_of(value));
        row.hash += pair_hash(numbers_[numbers_.size() - 2], numbers_.back());
        names_.insert(numbers_[numbers_.size() - 2]);
      }
    }
  }
  static constexpr std::size_t kSettingsStart = 3;  // probe, variant, device
  struct Row {
    const CellReport* report;
    std::uint32_t start;  // in numbers_: probe, variant, device, then name and value of each setting
    std::uint64_t hash;   // the sum of one hash per setting: less one setting's, the hash without it
  };
  const std::vector<Row>& rows() const { return rows_; }
  const std::set<std::uint32_t>& names() const { return names_; }  // of settings
  std::size_t size_of(const Row& row) const { return kSettingsStart + 2 * row.report->cell.settings.size(); }
  std::uint32_t at(const Row& row, std::size_t i) const { return numbers_[row.start + i]; }
  std::string_view text(std::uint32_t number) const { return texts_[number]; }
  static std::uint64_t pair_hash(std::uint64_t name, std::uint64_t value) {
    auto mixed = (name << 32 | value) + 0x9e3779b97f4a7c15ULL;  // splitmix64: sums of its values rarely collide
    mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ULL;
    mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebULL;
    return mixed ^ (mixed >> 31);
  }

 private:
  std::uint32_t number_of(const std::string& text) {
    const auto [it, added] = numbers_of_.try_emplace(text, static_cast<std::uint32_t>(texts_.size()));
    if (added) texts_.push_back(it->first);
    return it->second;
  }
  std::vector<Row> rows_;
  std::vector<std::uint32_t> numbers_;
  std::unordered_map<std::string, std::uint32_t> numbers_of_;
  std::vector<std::string_view> texts_;  // by number; node-based map keys do not move
  std::set<std::uint32_t> names_;
};

// A row without one setting's value (at `skip` in the row): equal to another when everything else is.
struct WithoutValue {
  const SettingRows::Row* row;
  std::size_t skip;
  std::uint64_t hash;
};

struct SameButValue {
  const SettingRows* rows;
  std::size_t operator()(const WithoutValue& key) const { return key.hash; }
  bool operator()(const WithoutValue& a, const WithoutValue& b) const {
    const auto size = rows->size_of(*a.row);
    if (a.hash != b.hash || a.skip != b.skip || size != rows->size_of(*b.row)) return false;
    for (std::size_t i = 0; i < size; ++i)
      if (i != a.skip && rows->at(*a.row, i) != rows->at(*b.row, i)) return false;
    return true;
  }
};

struct Member {
  std::uint32_t value;
  std::string_view digest;
};

// The values that change the bits among `members` (cells equal but for one setting): a member's value
// does when another member has both another value and another digest; by inclusion-exclusion, those are
// all but the ones sharing its value or its digest.
void add_changing_values(const std::vector<Member>& members, const SettingRows& rows, std::set<std::string>& changing) {
  std::unordered_map<std::uint32_t, std::size_t> by_value;
  std::unordered_map<std::string_view, std::size_t> by_digest;
  std::map<std::pair<std::uint32_t, std::string_view>, std::size_t> by_both;
  for (const auto& member : members) {
    ++by_value[member.value];
    ++by_digest[member.digest];
    ++by_both[{member.value, member.digest}];
  }
  for (const auto& member : members)
    if (members.size() + by_both[{member.value, member.digest}] > by_value[member.value] + by_digest[member.digest])
      changing.emplace(rows.text(member.value));
}

}  // namespace

// Two deterministic cells of a variant whose bits differ and whose settings differ in one setting
// only: that setting changes the bits. Comparing every pair of cells was quadratic; instead, once per
// setting, each cell goes into the bucket of cells equal to it in everything but that setting's value.
// Buckets were keyed by the text of every other setting: 20 times the report's size in memory (21 GB
// for a report of 10^6 cells).
std::vector<SettingNote> find_setting_notes(const std::vector<CellReport>& cells) {
  const SettingRows rows(cells);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::set<std::string>> changing;
  for (const auto name : rows.names()) {
    const SameButValue same{&rows};
    std::unordered_map<WithoutValue, std::vector<Member>, SameButValue, SameButValue> buckets(rows.rows().size(), same,
                                                                                              same);
    for (const auto& row : rows.rows()) {
      const auto size = rows.size_of(row);
      auto at = SettingRows::kSettingsStart;
      while (at < size && rows.at(row, at) != name) at += 2;
      if (at == size) continue;
      const auto value = rows.at(row, at + 1);
      buckets[{&row, at + 1, row.hash - SettingRows::pair_hash(name, value)}].push_back(
          {value, row.report->verdict.digest});
    }
    for (const auto& [key, members] : buckets) {
      if (members.size() < 2) continue;
      const auto& first = key.row->report->cell;
      std::set<std::string> values;
      add_changing_values(members, rows, values);
      if (!values.empty())
        changing[{first.probe, first.variant, first.device, std::string(rows.text(name))}].insert(values.begin(),
                                                                                                  values.end());
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
