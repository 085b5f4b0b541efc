// Reading the report file: its JSON into the report model, every field and cell checked
// (report/json_io.h).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "common/pattern.h"
#include "config/config_json.h"
#include "common/input_file.h"
#include "common/json_number.h"
#include "common/user_error.h"
#include "plan/cell_grammar.h"
#include "plan/cell_key.h"
#include "protocol/observation_json.h"
#include "report/json_io.h"

namespace repro_audit {
using nlohmann::json;

namespace {

CellReport cell_from_json(const json& j) {
  CellReport report;
  report.cell = j.get<Cell>();
  auto& v = report.verdict;
  const auto verdict = json_field<std::string>(j, "verdict");
  const auto kind = verdict_from_string(verdict);
  if (!kind) throw json::other_error::create(501, "unknown verdict '" + verdict + "'", &j);
  v.kind = *kind;
  v.runs = json_amount_or(j, "runs", 0);
  v.processes = json_amount_or(j, "processes", 0);
  v.distinct_digests = json_amount_or(j, "distinct_digests", 0);
  v.stopped_early = json_field_or(j, "stopped_early", false);
  v.budget_limited = json_field_or(j, "budget_limited", false);
  v.digest = json_field_or<std::string>(j, "digest", "");
  v.digests_agree = runs_agreed(v.kind) || json_field_or(j, "digests_agree", false);
  v.divergence_rate_bound = json_amount_or(j, "divergence_rate_bound", 1.0);
  v.divergence_scope = json_field_or<std::string>(j, "divergence_scope", "");
  if (j.contains("divergence")) v.divergence = json_field<Divergence>(j, "divergence");
  v.variations = json_field_or(j, "variations", std::vector<Divergence>{});
  if (j.contains("sensitivity")) v.sensitivity = json_field<Sensitivity>(j, "sensitivity");
  v.diverged_outputs = json_field_or(j, "diverged_outputs", std::vector<std::string>{});
  if (j.contains("origin")) v.origin = json_field<Origin>(j, "origin");
  v.origin_note = json_field_or<std::string>(j, "origin_note", "");
  v.steps = json_field_or(j, "step_growth", std::vector<StepGrowth>{});
  v.random_sources = json_field_or(j, "random_sources", std::vector<RandomSourceVerdict>{});
  if (v.random_sources.size() > kMaxRandomSources)
    throw json::out_of_range::create(406, fmt::format("\"random_sources\": at most {} per cell", kMaxRandomSources),
                                     nullptr);
  v.cause = json_field_or<std::string>(j, "cause", "");
  v.findings = json_field_or(j, "findings", std::vector<std::string>{});
  if (v.findings.size() > kMaxRandomSources)
    throw json::out_of_range::create(406, fmt::format("\"findings\": at most {} per cell", kMaxRandomSources), nullptr);
  v.message = json_field_or<std::string>(j, "message", "");
  v.warnings = json_field_or(j, "warnings", std::vector<std::string>{});
  v.timing = json_field_or(j, "timing", Timing{});
  v.per_op_timing = json_field_or(j, "per_op_timing", Timing{});
  v.per_op_plain_timing = json_field_or(j, "per_op_plain_timing", Timing{});
  v.kernels_varied = json_field_or(j, "kernels_varied", false);
  v.kernel_digest = json_field_or<std::string>(j, "kernel_digest", "");
  report.documented = json_field_or<std::string>(j, "documented", "");
  // Written from the verdict and judged again from it on reading, but never a value of another type.
  for (const char* key : {"passed", "skipped", "vacuous"}) json_field_or(j, key, false);
  if (j.contains("contradiction")) {
    const auto& c = j.at("contradiction");
    report.contradiction =
        Contradiction{json_field_or<std::string>(c, "expected", ""), json_field_or<std::string>(c, "text", ""),
                      json_field_or(c, "breaks_audit", false)};
  }
  report.observations = json_field_or(j, "observations", std::vector<ProcessObservation>{});
  return report;
}

// A digest that is not one would reach compare as a change, or as the absence of one; a name that breaks
// the grammar would reach folder names and generated scripts (plan/cell_grammar.h).
class BadCell : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_digest(const std::string& digest, const char* what, bool may_be_empty) {
  if ((may_be_empty && digest.empty()) || is_digest(digest)) return;
  throw BadCell(fmt::format("{} '{}' is not 32 lower-case hex digits", what, digest));
}

void check_digests(const CellReport& report) {
  check_digest(report.verdict.digest, "digest", true);
  check_digest(report.verdict.kernel_digest, "kernel_digest", true);
  for (const auto& observation : report.observations) {
    for (const auto& run : observation.runs) {
      check_digest(run.digest, "run digest", false);
      check_digest(run.kernel_digest, "run kernel_digest", true);
      for (const auto& output : run.outputs) check_digest(output.second, "output digest", false);
    }
    for (const auto& sequence : observation.kernel_sequences)
      check_digest(sequence.first, "kernel sequence digest", false);
    for (const auto& sequence : observation.op_sequences) check_digest(sequence.digest, "op sequence digest", false);
  }
}

// A mistake in a cell is kept, not thrown, until the schema says the file is a report at all.
void add_cell(ParsedReport& parsed, const json& j) {
  if (parsed.cell_error) return;
  const auto index = parsed.cells.size();
  try {
    parsed.cells.push_back(cell_from_json(j));
    check_digests(parsed.cells.back());
    // Schema /1 keys are made again from the fields (migrate_rule1_keys); /2 keys must be those.
    if (const auto problem = cell_grammar_problem(parsed.cells.back().cell, false); !problem.empty())
      throw BadCell(problem);
  } catch (const json::exception& error) {
    parsed.cell_error = fmt::format("cells[{}]: {}", index, error.what());
  } catch (const BadCell& error) {
    parsed.cell_error = fmt::format("cells[{}] ({}): {}", index, parsed.cells.back().cell.key, error.what());
  }
}

// Schema /1 keys named every applicable setting; each cell's settings give its key under today's rule.
void migrate_rule1_keys(Report& report, const std::string& source) {
  std::map<std::string, std::string> old_key_of;
  for (auto& report_cell : report.cells) {
    auto& cell = report_cell.cell;
    auto key = cell_key(cell.probe, cell.variant, cell.device, cell.settings);
    const auto [it, added] = old_key_of.emplace(key, cell.key);
    if (!added)
      throw UserError(fmt::format("{}: cell keys '{}' and '{}' both become '{}' under the current key rule", source,
                                  it->second, cell.key, key));
    cell.key = std::move(key);
  }
}

// Every key is the one its fields give, and no two cells share one: an empty or crafted key would
// make its cell MISSING in a gate while the real one is never compared.
void check_current_keys(const Report& report, const std::string& source, bool check_key) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < report.cells.size(); ++i) {
    const auto& cell = report.cells[i].cell;
    if (const auto problem = cell_grammar_problem(cell, check_key); !problem.empty())
      throw UserError(fmt::format("{}: malformed report: cells[{}]: {}", source, i, problem));
    if (!seen.insert(cell.key).second)
      throw UserError(fmt::format("{}: malformed report: cells[{}]: the key {} appears twice", source, i, cell.key));
  }
}

// A report's config is read by the one config reader, with the fields older versions did not write
// taken at their defaults, and held to the rules of a config file; its probes, perhaps of a newer
// version, to the names' grammar.
void check_report_config(const json& config, const std::string& source) {
  if (config.is_null()) return;
  if (!config.is_object()) throw UserError(fmt::format("{}: malformed report: \"config\" must be an object", source));
  auto complete = config_to_json(Config{});
  for (const auto& [name, value] : config.items()) complete[name] = value;
  const auto where = source + ": malformed report: config";
  auto read = config_from_json(complete, source + ": malformed report");
  for (const auto& selection : read.probes)
    if (!is_probe_name(selection.probe) ||
        !std::all_of(selection.variants.begin(), selection.variants.end(), is_variant_name))
      throw UserError(
          fmt::format("{}: probe {} is not a probe name with variant names", where, shown(selection.probe)));
  read.probes.clear();
  validate_config(read, {}, where);
}

// A report's `documentation`: strings from another machine, kept as data; a release that is not a
// release number is a malformed report.
DocumentationSource documentation_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw UserError(fmt::format("{}: malformed report: \"documentation\" must be an object", source));
  DocumentationSource documentation{j.value("torch", ""), j.value("release", ""), j.value("newer_than_known", false)};
  const auto& release = documentation.release;
  if (release.empty() || release.size() > 16 || release.find_first_not_of("0123456789.") != std::string::npos)
    throw UserError(
        fmt::format("{}: malformed report: documentation: release must be a release number like 2.11", source));
  // A version as torch spells it ("2.11.0+cu130", "2.16.0.dev20261101"): printed, never interpreted.
  const auto& torch = documentation.torch;
  if (torch.size() > 64 ||
      torch.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+_-") !=
          std::string::npos)
    throw UserError(fmt::format(
        "{}: malformed report: documentation: torch must be a version (letters, digits, '.+_-', 64 at most)", source));
  return documentation;
}

MergeInfo merge_from_json(const json& j) {
  MergeInfo merge;
  for (const auto& report : j.value("reports", json::array()))
    merge.reports.push_back({report.value("file", ""), report.value("host", ""), report.value("shard", ""),
                             static_cast<int>(json_integer_or(report, "cells", 0))});
  merge.missing_shards = j.value("missing_shards", std::vector<std::string>{});
  merge.missing_cells = j.value("missing_cells", std::vector<std::string>{});
  return merge;
}

}  // namespace

Report report_from_parsed(ParsedReport&& parsed, const std::string& source) {
  auto& j = parsed.header;
  const auto schema = j.is_object() ? j.find("schema") : j.end();
  if (schema == j.end() || (*schema != kReportSchema && *schema != kReportSchemaV1))
    throw UserError(fmt::format("{}: not a repro-audit report (expected \"schema\": \"{}\")", source, kReportSchema));
  const bool rule1_keys = *schema == kReportSchemaV1;
  try {
    Report report;
    report.tool_version = j.value("tool_version", "");
    // Read by field (gate's platform, explain's knobs): anything but an object would read as empty.
    if (j.contains("environment") && !j["environment"].is_object() && !j["environment"].is_null())
      throw UserError(
          fmt::format("{}: malformed report: \"environment\" must be an object (the fingerprint `env` "
                      "prints), not {}",
                      source, j["environment"].type_name()));
    if (j.contains("environment")) report.environment = std::move(j["environment"]);
    if (j.contains("config")) report.config = std::move(j["config"]);
    report.device = j.value("device", "");
    report.columns = j.value("columns", std::vector<std::string>{});
    report.duration_seconds = json_amount_or(j, "duration_seconds", 0.0);
    // A report that does not say its audit finished is not taken for a whole one; of schema /1, some
    // written before the field existed, it keeps the reading those always had.
    report.complete = json_field_or(j, "complete", rule1_keys);
    if (!j.contains("complete") && !rule1_keys)
      report.incomplete = "the report does not say its audit finished (no \"complete\" field)";
    report.host = j.value("host", "");
    if (j.contains("shard")) report.shard = shard_from_json(j.at("shard"));
    if (j.contains("merge")) report.merge = merge_from_json(j.at("merge"));
    if (j.contains("documentation")) report.documentation = documentation_from_json(j.at("documentation"), source);
    if (!j.contains("cells") || !j["cells"].is_array())
      throw UserError(fmt::format("{}: malformed report: \"cells\" must be an array", source));
    if (parsed.cell_error) throw UserError(fmt::format("{}: malformed report: {}", source, *parsed.cell_error));
    report.cells = std::move(parsed.cells);
    if (rule1_keys) migrate_rule1_keys(report, source);
    check_current_keys(report, source, !rule1_keys);
    check_report_config(report.config, source);
    // Costs are derived from the timings, like the notes: a report of a version that kept no
    // intervals gets its ratios' intervals from p10..p90 (timing/timing.h).
    fill_cost_ratios(report.cells);
    report.notes = find_setting_notes(report.cells);
    report.portability = find_portability(report.cells);
    return report;
  } catch (const json::exception& error) {
    throw UserError(fmt::format("{}: malformed report: {}", source, error.what()));
  }
}

ParsedReport parse_report_json(const std::string& text, const std::string& source) {
  // Another file of this tool's where a report goes (a baseline is YAML): say which, not "invalid JSON".
  static const Pattern other_schema(R"((^|\n)schema:[ \t]*["']?(repro-audit\.([a-z-]+)/[0-9]+))");
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && text[start] != '{')
    if (const auto found = other_schema.search(std::string_view(text).substr(0, 4096)))
      throw UserError(fmt::format("{}: a {} (schema: {}), not a report: give the JSON report that `run --json` writes",
                                  source, (*found)[3], (*found)[2]));
  ParsedReport parsed;
  parsed.header = parse_json_input(text, source, "cells", [&](json&& cell) { add_cell(parsed, cell); });
  return parsed;
}

Report report_from_json(const json& j, const std::string& source) {
  ParsedReport parsed;
  const auto cells = j.is_object() ? j.find("cells") : j.end();
  if (cells == j.end() || !cells->is_array()) {
    parsed.header = j;
  } else {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it != cells) parsed.header[it.key()] = *it;
    parsed.header["cells"] = json::array();
    for (const auto& cell : *cells) add_cell(parsed, cell);
  }
  return report_from_parsed(std::move(parsed), source);
}

Report parse_report(const std::string& text, const std::string& source) {
  return report_from_parsed(parse_report_json(text, source), source);
}

Report load_report_file(const std::string& path) {
  // The file's text is freed once parsed, before the report is judged again.
  auto parsed = parse_report_json(read_input_file(path, "report", kMaxReportBytes), path);
  return report_from_parsed(std::move(parsed), path);
}

std::vector<ReportFile> load_report_files(const std::vector<std::string>& paths) {
  std::vector<ReportFile> reports;
  for (const auto& path : paths) reports.push_back({path, load_report_file(path)});
  return reports;
}

}  // namespace repro_audit
