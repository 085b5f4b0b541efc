#include "compare/comparison_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace repro_audit {

std::string comparison_title(const Comparison& comparison, const GateResult* gate) {
  if (!gate) {
    const auto changed = std::count_if(comparison.cells.begin(), comparison.cells.end(),
                                       [](const CellComparison& cell) { return !cell.has(Change::same); });
    return fmt::format("repro-audit compare: {} of {} cells changed", changed, comparison.cells.size());
  }
  const auto failing = gate->failures.size(), warning = gate->warnings.size();
  std::string title = fmt::format("repro-audit gate: {}", gate->passed ? "passed" : "FAILED");
  std::vector<std::string> parts;
  if (failing) parts.push_back(fmt::format("{} failing cell{}", failing, failing == 1 ? "" : "s"));
  if (warning) parts.push_back(fmt::format("{} warning{}", warning, warning == 1 ? "" : "s"));
  if (!parts.empty()) title += fmt::format(" ({})", fmt::join(parts, ", "));
  return title;
}

std::string changes_text(const std::vector<Change>& changes) {
  std::vector<std::string> names;
  for (auto change : changes) names.push_back(to_string(change));
  return fmt::format("{}", fmt::join(names, "+"));
}

std::string headline_counts_text(const Comparison& comparison) {
  std::vector<std::string> parts;
  for (const auto& [change, count] : count_headlines(comparison))
    parts.push_back(fmt::format("{} {}", count, to_string(change)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

GateActions::GateActions(const GateResult* gate) {
  if (!gate) return;
  // The first finding for a key wins, failures before warnings, as find_finding has it.
  for (const auto& finding : gate->failures) by_key_.emplace(finding.key, std::pair{GateAction::fail, &finding});
  for (const auto& finding : gate->warnings) by_key_.emplace(finding.key, std::pair{GateAction::warn, &finding});
}

GateAction GateActions::action(const std::string& key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? GateAction::ignore : it->second.first;
}

const GateFinding* GateActions::finding(const std::string& key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second.second;
}

std::vector<const CellComparison*> cells_to_list(const Comparison& comparison, const GateResult* gate,
                                                 bool include_same) {
  const GateActions actions(gate);
  std::vector<std::pair<std::pair<int, int>, const CellComparison*>> ranked;
  for (const auto& cell : comparison.cells) {
    if (!include_same && cell.has(Change::same)) continue;
    const auto action = actions.action(cell.key);
    const int action_rank = action == GateAction::fail ? 0 : action == GateAction::warn ? 1 : 2;
    ranked.push_back({{action_rank, static_cast<int>(cell.changes.front())}, &cell});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const CellComparison*> cells;
  for (const auto& entry : ranked) cells.push_back(entry.second);
  return cells;
}

namespace {

// A finding's line lists this many flag sets and counts the rest: the full matrix has dozens.
constexpr std::size_t kFlagSetsShown = 6;

std::string key_cell(const std::string& key) { return key.substr(0, key.find('|')); }

std::string verdict_or_dash(const std::optional<SnapshotCell>& cell) { return cell ? to_string(cell->verdict) : "-"; }

}  // namespace

std::string ListedFinding::cell() const { return cells.size() == 1 ? first().key : key_cell(first().key); }

std::string ListedFinding::flag_sets() const {
  std::vector<std::string> keys;
  for (const auto* cell : cells) keys.push_back(cell->key);
  return flag_sets_text(keys);
}

std::string key_variant(const std::string& key) { return key_cell(key); }

std::string key_flag_set(const std::string& key) {
  const auto bar = key.find('|');
  return bar == std::string::npos || bar + 1 == key.size() ? "defaults" : key.substr(bar + 1);
}

std::string flag_sets_text(const std::vector<std::string>& keys) {
  if (keys.size() < 2) return "";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < keys.size() && i < kFlagSetsShown; ++i) names.push_back(key_flag_set(keys[i]));
  if (keys.size() > kFlagSetsShown) names.push_back(fmt::format("and {} more", keys.size() - kFlagSetsShown));
  return fmt::format("{} flag sets: {}", keys.size(), fmt::join(names, ", "));
}

std::vector<ListedFinding> findings_to_list(const Comparison& comparison, const GateResult* gate, bool include_same) {
  const GateActions actions(gate);
  std::vector<ListedFinding> findings;
  std::unordered_map<std::string, std::size_t> index_of;  // what the cells share -> their finding
  for (const auto* cell : cells_to_list(comparison, gate, include_same)) {
    const auto action = actions.action(cell->key);
    auto shared =
        fmt::format("{}\n{}\n{}\n{}\n{}\n{}", key_cell(cell->key), changes_text(cell->changes), to_string(action),
                    verdict_or_dash(cell->before), verdict_or_dash(cell->after), cell->detail);
    const auto [it, added] = index_of.emplace(std::move(shared), findings.size());
    if (added)
      findings.push_back({{cell}, action});
    else
      findings[it->second].cells.push_back(cell);
  }
  return findings;
}

std::string change_css_class(Change change) {
  std::string name = to_string(change);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return "c-" + name;
}

std::string platform_sentence(const Comparison& comparison) {
  if (!comparison.platform_changed) return "Platform unchanged: the unchanged_platform rules apply.";
  return comparison.platform_summary +
         "; the changed_platform rules apply (by default DRIFT warns instead of failing).";
}

std::string platform_status(const EnvironmentChange& change) {
  if (!change.platform) return "not platform";
  return change.unknown ? "unknown" : "platform";
}

std::pair<std::string, std::string> change_sides(const EnvironmentChange& change) {
  if (change.removed.empty() && change.added.empty())
    return {change.before.empty() ? "not recorded" : change.before,
            change.after.empty() ? "not recorded" : change.after};
  auto signed_members = [](const std::vector<std::string>& members, const char* sign) {
    std::vector<std::string> parts;
    for (const auto& member : members) parts.push_back(sign + member);
    return fmt::format("{}", fmt::join(parts, " "));
  };
  return {signed_members(change.removed, "-"), signed_members(change.added, "+")};
}

}  // namespace repro_audit
