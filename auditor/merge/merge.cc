#include "merge/merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "compare/platform.h"
#include "common/user_error.h"

namespace repro_audit {
namespace {

// A report's shard; an unsharded report is shard 1/1 of a plan of its own cells.
ShardInfo shard_of(const Report& report) {
  if (report.shard) return *report.shard;
  ShardInfo whole;
  for (const auto& cell : report.cells) whole.plan.push_back(cell.cell.key);
  return whole;
}

std::string shard_text(const ShardInfo& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

std::string host_text(const Report& report) { return report.host.empty() ? "an unnamed host" : "host " + report.host; }

// The first top-level key whose value differs, the config's own file path aside (hosts keep it
// where they like).
std::string config_difference(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::string> keys;
  for (const auto* config : {&a, &b})
    if (config->is_object())
      for (auto it = config->begin(); it != config->end(); ++it) keys.insert(it.key());
  for (const auto& key : keys) {
    if (key == "source") continue;
    const auto left = a.is_object() && a.contains(key) ? a.at(key) : nlohmann::json();
    const auto right = b.is_object() && b.contains(key) ? b.at(key) : nlohmann::json();
    if (left != right)
      return fmt::format("{}: {} vs {}", key, left.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                         right.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return "";
}

void check_same_audit(const ReportFile& first, const ShardInfo& shard_a, const ReportFile& other,
                      const ShardInfo& shard_b) {
  const auto& a = first.report;
  const auto& b = other.report;
  if (a.tool_version != b.tool_version)
    throw UserError(fmt::format("{} was written by repro-audit {}, {} by {}: merge reports of one version", first.file,
                                a.tool_version, other.file, b.tool_version));
  if (const auto difference = config_difference(a.config, b.config); !difference.empty())
    throw UserError(fmt::format("{} and {} audited different configs ({}): merge shards of one config", first.file,
                                other.file, difference));
  if (a.device != b.device)
    throw UserError(fmt::format("{} ran on device {}, {} on {}: merge reports of one device", first.file, a.device,
                                other.file, b.device));
  const auto changes = environment_changes(a.environment, b.environment);
  if (is_platform_change(changes))
    throw UserError(
        fmt::format("{} and {} ran on different platforms ({}): their bits may differ for reasons of "
                    "the platform; compare them with `repro-audit fleet`",
                    first.file, other.file, platform_summary(changes, first.file, other.file)));
  if (shard_a.count != shard_b.count)
    throw UserError(fmt::format("{} is shard {}, {} is shard {}: shards of different partitions", first.file,
                                shard_text(shard_a), other.file, shard_text(shard_b)));
  if (shard_a.plan != shard_b.plan)
    throw UserError(fmt::format("{} and {} are shards of different plans ({} and {} cells)", first.file, other.file,
                                shard_a.plan.size(), shard_b.plan.size()));
}

std::set<std::string> cell_keys(const Report& report) {
  std::set<std::string> keys;
  for (const auto& cell : report.cells) keys.insert(cell.cell.key);
  return keys;
}

// The inputs of each shard index, refusing a shard given twice from one host, a shard whose cells
// differ from its twin's, and a cell held by two shards.
// `shards[i]` is input i's shard.
std::map<int, std::vector<std::size_t>> group_shards(const std::vector<ReportFile>& inputs,
                                                     const std::vector<ShardInfo>& shards) {
  std::map<int, std::vector<std::size_t>> by_index;
  std::map<std::string, std::size_t> holder;  // cell key -> the first input holding it
  const std::set<std::string> plan(shards.front().plan.begin(), shards.front().plan.end());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& input = inputs[i];
    const auto& shard = shards[i];
    auto& twins = by_index[shard.index];
    for (const auto t : twins) {
      const auto* twin = &inputs[t];
      if (twin->report.host == input.report.host)
        throw UserError(fmt::format(
            "shard {} is given twice from {} ({} and {}): a rerun replaces the first run, it does not add to it; give "
            "one of them{}",
            shard_text(shard), host_text(input.report), twin->file, input.file,
            input.report.host.empty() ? " (reports of earlier versions do not name their host)" : ""));
      if (cell_keys(twin->report) != cell_keys(input.report))
        throw UserError(
            fmt::format("{} and {} are both shard {} but hold different cells (balanced by {} and by {}): "
                        "overlapping shards; run every host's shards with the same --timings",
                        twin->file, input.file, shard_text(shard), shards[t].balance, shard.balance));
    }
    if (twins.empty())
      for (const auto& cell : input.report.cells) {
        if (!plan.count(cell.cell.key))
          throw UserError(fmt::format("{}: cell {} is not in the plan its shard names", input.file, cell.cell.key));
        const auto [it, added] = holder.emplace(cell.cell.key, i);
        if (!added)
          throw UserError(fmt::format("overlapping shards: cell {} is in both {} (shard {}) and {} (shard {})",
                                      cell.cell.key, inputs[it->second].file, shard_text(shards[it->second]),
                                      input.file, shard_text(shard)));
      }
    twins.push_back(i);
  }
  return by_index;
}

}  // namespace

Report merge_reports(const std::vector<ReportFile>& inputs, const MergeOptions& options) {
  if (inputs.empty()) throw UserError("merge: no reports given");
  for (const auto& input : inputs)
    if (!input.report.complete)
      throw UserError(
          fmt::format("{} is an interrupted audit (only its finished cells are there): finish it with "
                      "--resume before merging",
                      input.file));
  std::vector<ShardInfo> shards;
  for (const auto& input : inputs) shards.push_back(shard_of(input.report));
  for (std::size_t i = 1; i < inputs.size(); ++i)
    check_same_audit(inputs.front(), shards.front(), inputs[i], shards[i]);
  const auto by_index = group_shards(inputs, shards);
  const auto& whole = shards.front();

  MergeInfo merge;
  for (int index = 1; index <= whole.count; ++index)
    if (!by_index.count(index)) merge.missing_shards.push_back(fmt::format("{}/{}", index, whole.count));
  if (!merge.missing_shards.empty() && !options.allow_partial)
    throw UserError(
        fmt::format("missing shard{} {} of {} (given: {}); merge them all, or pass --allow-partial to "
                    "merge what is here and name what is missing",
                    merge.missing_shards.size() == 1 ? "" : "s", fmt::join(merge.missing_shards, ", "), whole.count,
                    inputs.size() == 1 ? inputs.front().file : "the other reports"));

  // Each cell's observations from every host that ran its shard, numbered on: processes add up.
  std::map<std::string, const CellReport*> first_of;
  std::map<std::string, std::vector<ProcessObservation>> observations;
  std::map<std::string, std::set<std::string>> hosts_of;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& input = inputs[i];
    merge.reports.push_back(
        {input.file, input.report.host, shard_text(shards[i]), static_cast<int>(input.report.cells.size())});
    for (const auto& cell : input.report.cells) {
      first_of.emplace(cell.cell.key, &cell);
      hosts_of[cell.cell.key].insert(input.report.host);
      auto& seen = observations[cell.cell.key];
      const int offset = static_cast<int>(seen.size());
      for (auto observation : cell.observations) {
        observation.process += offset;
        if (observation.host.empty()) observation.host = input.report.host;
        seen.push_back(std::move(observation));
      }
    }
  }
  for (auto& [key, seen] : observations)
    if (hosts_of[key].size() < 2)
      for (auto& observation : seen) observation.host.clear();  // one host: nothing to tell apart

  Plan plan;
  plan.device = inputs.front().report.device;
  for (const auto& label : inputs.front().report.columns) plan.columns.push_back({label, {}});
  for (const auto& key : whole.plan) {
    const auto it = first_of.find(key);
    if (it == first_of.end())
      merge.missing_cells.push_back(key);
    else
      plan.cells.push_back(it->second->cell);
  }
  auto report = build_report(plan, observations, [&](const Cell& cell) {
    return documented_from_string(first_of.at(cell.key)->documented).value_or(Documented::unknown);
  });
  const auto& first = inputs.front().report;
  report.tool_version = first.tool_version;
  report.environment = first.environment;
  report.config = first.config;
  report.documentation = first.documentation;
  std::set<std::string> hosts;
  for (const auto& input : inputs) {
    hosts.insert(input.report.host);
    report.duration_seconds = std::max(report.duration_seconds, input.report.duration_seconds);
  }
  if (hosts.size() == 1) report.host = *hosts.begin();
  report.merge = std::move(merge);
  return report;
}

}  // namespace repro_audit
