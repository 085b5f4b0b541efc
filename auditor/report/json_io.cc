#include "report/json_io.h"

#include <fmt/format.h>

#include "common/json_number.h"
#include "protocol/observation_json.h"

namespace repro_audit {
using nlohmann::json;

namespace {

json cell_to_json(const CellReport& report) {
  const auto& v = report.verdict;
  json j = report.cell;
  j["verdict"] = to_string(v.kind);
  j["passed"] = !is_failing(v);
  j["skipped"] = is_skipped(v);
  j["runs"] = v.runs;
  j["processes"] = v.processes;
  j["distinct_digests"] = v.distinct_digests;
  if (v.stopped_early) j["stopped_early"] = true;
  if (v.budget_limited) j["budget_limited"] = true;
  j["documented"] = report.documented;
  if (!v.digest.empty()) j["digest"] = v.digest;
  if (runs_agreed(v.kind)) j["divergence_rate_bound"] = v.divergence_rate_bound;
  if (v.kind == VerdictKind::warns) j["digests_agree"] = v.digests_agree;
  if (!v.divergence_scope.empty()) j["divergence_scope"] = v.divergence_scope;
  if (v.divergence) j["divergence"] = *v.divergence;
  if (!v.variations.empty()) j["variations"] = v.variations;
  if (v.sensitivity) j["sensitivity"] = *v.sensitivity;
  if (is_vacuous(v)) j["vacuous"] = true;
  if (!v.diverged_outputs.empty()) j["diverged_outputs"] = v.diverged_outputs;
  if (v.origin) j["origin"] = *v.origin;
  if (!v.origin_note.empty()) j["origin_note"] = v.origin_note;
  if (!v.steps.empty()) j["step_growth"] = v.steps;
  if (!v.random_sources.empty()) j["random_sources"] = v.random_sources;
  if (!v.cause.empty()) j["cause"] = v.cause;
  if (!v.findings.empty()) j["findings"] = v.findings;
  if (!v.message.empty()) j["message"] = v.message;
  if (!v.warnings.empty()) j["warnings"] = v.warnings;
  if (v.timing.samples > 0) j["timing"] = v.timing;
  if (v.per_op_timing.samples > 0) j["per_op_timing"] = v.per_op_timing;
  if (v.per_op_plain_timing.samples > 0) j["per_op_plain_timing"] = v.per_op_plain_timing;
  if (report.cost) {
    j["cost_ratio"] = report.cost->value;
    j["cost_ratio_interval"] = {report.cost->low, report.cost->high};
  }
  j["kernels_varied"] = v.kernels_varied;
  if (!v.kernel_digest.empty()) j["kernel_digest"] = v.kernel_digest;
  if (report.contradiction)
    j["contradiction"] = {{"expected", report.contradiction->expected},
                          {"text", report.contradiction->text},
                          {"breaks_audit", report.contradiction->breaks_audit}};
  j["observations"] = report.observations;
  return j;
}

json merge_to_json(const MergeInfo& merge) {
  json j = {
      {"reports", json::array()}, {"missing_shards", merge.missing_shards}, {"missing_cells", merge.missing_cells}};
  for (const auto& report : merge.reports)
    j["reports"].push_back(
        {{"file", report.file}, {"host", report.host}, {"shard", report.shard}, {"cells", report.cells}});
  return j;
}

}  // namespace

json report_to_json(const Report& report) {
  json j = {{"schema", kReportSchema},
            {"tool_version", report.tool_version},
            {"environment", report.environment},
            {"config", report.config},
            {"device", report.device},
            {"columns", report.columns},
            {"duration_seconds", report.duration_seconds},
            {"complete", report.complete},
            {"cells", json::array()},
            {"notes", json::array()}};
  if (!report.host.empty()) j["host"] = report.host;
  if (report.shard) j["shard"] = shard_to_json(*report.shard);
  if (report.merge) j["merge"] = merge_to_json(*report.merge);
  if (report.documentation)
    j["documentation"] = {{"torch", report.documentation->torch},
                          {"release", report.documentation->release},
                          {"newer_than_known", report.documentation->newer_than_known}};
  for (const auto& cell : report.cells) j["cells"].push_back(cell_to_json(cell));
  j["contradictions"] = json::array();
  for (const auto& cell : report.cells)
    if (cell.contradiction)
      j["contradictions"].push_back({{"key", cell.cell.key},
                                     {"verdict", to_string(cell.verdict.kind)},
                                     {"expected", cell.contradiction->expected},
                                     {"text", cell.contradiction->text},
                                     {"breaks_audit", cell.contradiction->breaks_audit}});
  for (const auto& note : report.notes)
    j["notes"].push_back({{"probe", note.probe},
                          {"variant", note.variant},
                          {"device", note.device},
                          {"setting", note.setting},
                          {"values", note.values},
                          {"text", note.text}});
  j["portability"] = json::array();
  for (const auto& entry : report.portability) {
    j["portability"].push_back({{"probe", entry.probe},
                                {"variant", entry.variant},
                                {"device", entry.device},
                                {"settings", entry.settings},
                                {"level", to_string(entry.level)},
                                {"limit", entry.limit}});
    if (!entry.invariance.empty()) j["portability"].back()["invariance"] = entry.invariance;
  }
  return j;
}

json shard_to_json(const ShardInfo& shard) {
  return {{"index", shard.index},
          {"count", shard.count},
          {"source", shard.source},
          {"balance", shard.balance},
          {"plan", shard.plan}};
}

ShardInfo shard_from_json(const json& j) {
  ShardInfo shard;
  shard.index = json_integer_or(j, "index", 0);
  shard.count = json_integer_or(j, "count", 0);
  if (shard.count < 1 || shard.index < 1 || shard.index > shard.count)
    throw json::other_error::create(
        501, fmt::format("shard {}/{} is not K/N with 1 <= K <= N", shard.index, shard.count), &j);
  shard.source = j.value("source", "");
  shard.balance = j.value("balance", "");
  shard.plan = j.value("plan", std::vector<std::string>{});
  return shard;
}

}  // namespace repro_audit
