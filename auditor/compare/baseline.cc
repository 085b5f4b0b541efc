// Baselines: made from reports, written as YAML, and the report-or-baseline loader of compare and gate.
// Reading baseline YAML is in baseline_reader.cc.
#include "compare/baseline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <yaml-cpp/yaml.h>

#include "common/atomic_file.h"
#include "common/user_error.h"
#include "compare/yaml_scalar.h"
#include "common/input_file.h"
#include "kind/cell_kind.h"
#include "report/json_io.h"

namespace repro_audit {
using nlohmann::json;
namespace {

// Quoted only when a plain scalar would read back as another type, e.g. a torch version "2.0".
void emit_string(YAML::Emitter& out, const std::string& text) {
  if (typed_scalar(text).is_string())
    out << text;
  else
    out << YAML::DoubleQuoted << text;
}

void emit_json(YAML::Emitter& out, const json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [name, item] : value.items()) {
      out << YAML::Key;
      emit_string(out, name);
      out << YAML::Value;
      emit_json(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const auto& item : value) emit_json(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    emit_string(out, value.get<std::string>());
  } else if (value.is_null()) {
    out << YAML::Null;
  } else {
    out << value.dump();  // booleans and numbers, in JSON's shortest round-trip spelling
  }
}

void emit_cell(YAML::Emitter& out, const SnapshotCell& cell) {
  out << YAML::Key << cell.key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "verdict" << YAML::Value << to_string(cell.verdict);
  for (const auto& [name, value] : {std::pair{"digest", &cell.digest},
                                    {"kernel_digest", &cell.kernel_digest},
                                    {"input_digest", &cell.input_digest},
                                    {"random_sources", &cell.random_sources}})
    if (!value->empty()) {
      out << YAML::Key << name << YAML::Value;
      emit_string(out, *value);
    }
  if (cell.kernels_varied) out << YAML::Key << "kernels_varied" << YAML::Value << true;
  if (cell.timing.samples > 0) {
    out << YAML::Key << "median_ns" << YAML::Value << cell.timing.median_ns;
    out << YAML::Key << "p10_ns" << YAML::Value << cell.timing.p10_ns;
    out << YAML::Key << "p90_ns" << YAML::Value << cell.timing.p90_ns;
    out << YAML::Key << "samples" << YAML::Value << cell.timing.samples;
    if (cell.timing.has_interval()) {  // since the median's interval was kept; optional in /2
      out << YAML::Key << "ci_low_ns" << YAML::Value << cell.timing.ci_low_ns;
      out << YAML::Key << "ci_high_ns" << YAML::Value << cell.timing.ci_high_ns;
    }
  }
  out << YAML::EndMap;
}

// A record as a plain string when it has no launch configuration (every CPU record), else a flow map.
void emit_kernel_record(YAML::Emitter& out, const KernelRecord& record) {
  if (record.grid.empty() && record.block.empty()) return emit_string(out, record.name);
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [name, value] : {std::pair{"name", &record.name}, {"grid", &record.grid}, {"block", &record.block}})
    if (!value->empty()) {
      out << YAML::Key << name << YAML::Value;
      emit_string(out, *value);
    }
  out << YAML::EndMap;
}

bool storable(const std::vector<KernelRecord>& records) {
  return records.size() <= kMaxBaselineKernelRecords &&
         std::all_of(records.begin(), records.end(),
                     [](const KernelRecord& record) { return kernel_record_problem(record).empty(); });
}

// Each sequence once, in the order cells first name it, however many cells share it.
void emit_kernel_sequences(YAML::Emitter& out, const Baseline& baseline) {
  std::vector<const SnapshotCell*> firsts;
  std::unordered_set<std::string_view> seen;
  for (const auto& cell : baseline.cells)
    if (cell.kernels && !cell.kernel_digest.empty() && seen.insert(cell.kernel_digest).second &&
        storable(*cell.kernels))
      firsts.push_back(&cell);
  if (firsts.empty()) return;
  out << YAML::Key << "kernels" << YAML::Value << YAML::BeginMap;
  for (const auto* cell : firsts) {
    out << YAML::Key;
    emit_string(out, cell->kernel_digest);
    out << YAML::Value;
    if (cell->kernels->empty()) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const auto& record : *cell->kernels) emit_kernel_record(out, record);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

// The agreed sequence's records, from the first observation that kept them; one copy per digest.
KernelSequence agreed_kernels(const CellReport& cell, std::unordered_map<std::string, KernelSequence>& copies) {
  const auto& digest = cell.verdict.kernel_digest;
  if (digest.empty()) return nullptr;
  if (const auto it = copies.find(digest); it != copies.end()) return it->second;
  for (const auto& observation : cell.observations)
    for (const auto& [sequence_digest, records] : observation.kernel_sequences)
      if (sequence_digest == digest) {
        auto copy = std::make_shared<std::vector<KernelRecord>>();
        copy->reserve(records.size());
        for (const auto& record : records) copy->push_back({record.name, record.grid, record.block});
        return copies[digest] = std::move(copy);
      }
  return nullptr;
}

std::string first_input_digest(const CellReport& cell) {
  for (const auto& observation : cell.observations)
    if (!observation.input_digest.empty()) return observation.input_digest;
  return "";
}

}  // namespace

std::string kernel_record_problem(const KernelRecord& record) {
  if (record.name.size() > kMaxKernelNameBytes)
    return fmt::format("a kernel name longer than {} bytes", kMaxKernelNameBytes);
  if (record.grid.size() > kMaxKernelLaunchBytes || record.block.size() > kMaxKernelLaunchBytes)
    return fmt::format("a grid or block longer than {} bytes", kMaxKernelLaunchBytes);
  for (const auto* text : {&record.name, &record.grid, &record.block})
    if (std::any_of(text->begin(), text->end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      return "a control character in a kernel record";
  return "";
}

std::string random_sources_summary(const std::vector<RandomSourceVerdict>& sources) {
  std::vector<std::string> parts;
  for (const auto& source : sources) {
    const auto seeded = source.seeded == "alike"     ? "seeded alike"
                        : source.seeded == "differs" ? "not seeded alike"
                        : source.seeded == "runner"  ? "seeded by repro-audit"
                                                     : "seeding not known";
    parts.push_back(fmt::format("{} {}", source.name, seeded));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ", "));
}

Baseline baseline_from_report(const Report& report, const std::string& source) {
  Baseline baseline;
  baseline.source = source;
  baseline.tool_version = report.tool_version;
  baseline.input_scheme = input_scheme_of(report);
  baseline.environment = report.environment;
  std::unordered_map<std::string, KernelSequence> kernel_copies;
  for (const auto& cell : report.cells) {
    const auto& verdict = cell.verdict;
    baseline.cells.push_back({cell.cell.key, verdict.kind, verdict.digest, verdict.kernel_digest,
                              verdict.kernels_varied, verdict.timing, verdict.message,
                              agreed_kernels(cell, kernel_copies), first_input_digest(cell),
                              random_sources_summary(verdict.random_sources)});
    kind_of(cell.cell).add_to_baseline(cell, baseline);
  }
  return baseline;
}

std::string baseline_to_yaml(const Baseline& baseline) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << kBaselineSchema;
  out << YAML::Key << "tool_version" << YAML::Value;
  emit_string(out, baseline.tool_version);
  out << YAML::Key << "input_scheme" << YAML::Value << to_int(baseline.input_scheme);
  out << YAML::Key << "environment" << YAML::Value;
  emit_json(out, baseline.environment.is_object() ? baseline.environment : json::object());
  out << YAML::Key << "cells" << YAML::Value;
  if (baseline.cells.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& cell : baseline.cells) emit_cell(out, cell);
  out << YAML::EndMap;
  emit_kernel_sequences(out, baseline);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void write_baseline_file(const Baseline& baseline, const std::string& path) {
  write_file_atomically(path, baseline_to_yaml(baseline));
}

Baseline load_baseline_file(const std::string& path) {
  return parse_baseline(read_input_file(path, "baseline", kMaxReportBytes), path);
}

Snapshot load_comparable(const std::string& path) {
  auto text = read_input_file(path, "report or baseline", kMaxReportBytes);
  const auto start = text.find_first_not_of(" \t\r\n");
  // A report is JSON (an object); anything else is read as a baseline, whose errors then apply.
  if (start == std::string::npos || text[start] != '{') return parse_baseline(text, path);
  auto parsed = parse_report_json(text, path);
  const auto& header = parsed.header;
  const auto schema = header.contains("schema") && header["schema"].is_string() ? header["schema"] : json("");
  if (schema == kBaselineSchema || schema == kBaselineSchemaV1) return parse_baseline(text, path);  // JSON is YAML too
  if (schema != kReportSchema && schema != kReportSchemaV1)
    throw UserError(fmt::format("{}: neither a repro-audit report (\"schema\": \"{}\") nor a baseline (schema: {})",
                                path, kReportSchema, kBaselineSchema));
  std::string().swap(text);  // parsed: freed before the report is judged again
  return baseline_from_report(report_from_parsed(std::move(parsed), path), path);
}

const SnapshotCell* find_snapshot_cell(const Snapshot& snapshot, const std::string& key) {
  for (const auto& cell : snapshot.cells)
    if (cell.key == key) return &cell;
  return nullptr;
}

bool is_reproducible(const SnapshotCell& cell) {
  return runs_agreed(cell.verdict) || (cell.verdict == VerdictKind::warns && !cell.digest.empty());
}

bool is_diverging(const SnapshotCell& cell) {
  return cell.verdict == VerdictKind::nondeterministic || cell.verdict == VerdictKind::varies ||
         (cell.verdict == VerdictKind::warns && cell.digest.empty());
}

bool is_broken(const SnapshotCell& cell) {
  return cell.verdict == VerdictKind::error || cell.verdict == VerdictKind::crashed ||
         cell.verdict == VerdictKind::timeout;
}

}  // namespace repro_audit
