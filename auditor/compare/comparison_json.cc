#include "compare/comparison_json.h"

#include "compare/comparison_text.h"
#include "report/json_io.h"

namespace repro_audit {
using nlohmann::json;
namespace {

json names_of(const std::vector<Change>& changes) {
  json names = json::array();
  for (auto change : changes) names.push_back(to_string(change));
  return names;
}

json snapshot_cell_json(const SnapshotCell& cell) {
  json j = {{"verdict", to_string(cell.verdict)}};
  if (!cell.digest.empty()) j["digest"] = cell.digest;
  if (!cell.kernel_digest.empty()) j["kernel_digest"] = cell.kernel_digest;
  if (cell.kernels_varied) j["kernels_varied"] = true;
  if (cell.timing.samples > 0) j["timing"] = cell.timing;
  if (!cell.message.empty()) j["message"] = cell.message;
  return j;
}

json findings_json(const std::vector<GateFinding>& findings) {
  json list = json::array();
  for (const auto& finding : findings) list.push_back({{"key", finding.key}, {"classes", names_of(finding.triggers)}});
  return list;
}

}  // namespace

json comparison_to_json(const Comparison& comparison, const GateResult* gate) {
  json j = {{"schema", kComparisonSchema},
            {"before", comparison.before_source},
            {"after", comparison.after_source},
            {"slower_threshold", comparison.slower_threshold},
            {"environment", {{"platform_changed", comparison.platform_changed}, {"changes", json::array()}}},
            {"platform_summary", comparison.platform_summary},
            {"timing_compared", comparison.timing_compared},
            {"summary", json::object()},
            {"cells", json::array()}};
  for (const auto& change : comparison.environment_changes) {
    json item = {{"field", change.field},           {"before", change.before},     {"after", change.after},
                 {"difference", change.difference}, {"platform", change.platform}, {"unknown", change.unknown}};
    if (!change.removed.empty() || !change.added.empty()) {
      item["removed"] = change.removed;
      item["added"] = change.added;
    }
    j["environment"]["changes"].push_back(item);
  }
  for (const auto& [change, count] : count_headlines(comparison)) j["summary"][to_string(change)] = count;
  const GateActions actions(gate);
  for (const auto& cell : comparison.cells) {
    json item = {{"key", cell.key}, {"classes", names_of(cell.changes)}, {"detail", cell.detail}};
    if (cell.before) item["before"] = snapshot_cell_json(*cell.before);
    if (cell.after) item["after"] = snapshot_cell_json(*cell.after);
    if (gate) item["gate"] = to_string(actions.action(cell.key));
    j["cells"].push_back(item);
  }
  if (gate)
    j["gate"] = {{"passed", gate->passed},
                 {"policy", gate->policy_source},
                 {"failures", findings_json(gate->failures)},
                 {"warnings", findings_json(gate->warnings)}};
  return j;
}

}  // namespace repro_audit
