#include "compare/baseline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "config/user_error.h"
#include "config/yaml_reader.h"
#include "report/atomic_file.h"
#include "report/json_io.h"

namespace repro_audit {
using nlohmann::json;
namespace {

const std::vector<std::string> kTopKeys = {"schema", "tool_version", "environment", "cells"};
const std::vector<std::string> kCellKeys = {"verdict",   "digest", "kernel_digest", "kernels_varied",
                                            "median_ns", "p10_ns", "p90_ns",        "samples"};

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty()) return std::nullopt;
  return value;
}

// How a plain (unquoted) YAML scalar reads back: YAML 1.2 core-schema types, else a string.
json typed_scalar(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (text.empty() || text == "~" || text == "null") return nullptr;
  if (auto integer = parse_integer(text)) return *integer;
  if (text.find_first_of(".eE") != std::string::npos) {
    std::istringstream in(text);
    double value = 0;
    if (in >> value && in.peek() == std::char_traits<char>::eof()) return value;
  }
  return text;
}

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

// yaml-cpp tags quoted scalars "!" and plain ones "?": a quoted "2.0" stays a string.
json json_from_yaml(const YAML::Node& node) {
  if (node.IsMap()) {
    json object = json::object();
    for (const auto& entry : node) object[entry.first.Scalar()] = json_from_yaml(entry.second);
    return object;
  }
  if (node.IsSequence()) {
    json array = json::array();
    for (const auto& item : node) array.push_back(json_from_yaml(item));
    return array;
  }
  if (!node.IsScalar()) return nullptr;
  return node.Tag() == "!" ? json(node.Scalar()) : typed_scalar(node.Scalar());
}

void emit_cell(YAML::Emitter& out, const SnapshotCell& cell) {
  out << YAML::Key << cell.key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "verdict" << YAML::Value << to_string(cell.verdict);
  for (const auto& [name, value] : {std::pair{"digest", &cell.digest}, {"kernel_digest", &cell.kernel_digest}})
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
  }
  out << YAML::EndMap;
}

class BaselineReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::int64_t integer(const YAML::Node& node, const std::string& what) const {
    const auto text = scalar(node, what);
    const auto value = parse_integer(text);
    if (!value || *value < 0) fail(node, fmt::format("{} must be a non-negative integer, not '{}'", what, text));
    return *value;
  }

  void check_schema(const YAML::Node& root) const {
    for (const auto& entry : root)
      if (entry.first.IsScalar() && entry.first.Scalar() == "schema") {
        const auto schema = scalar(entry.second, "schema");
        if (schema != kBaselineSchema)
          fail(entry.second, fmt::format("schema '{}' is not supported; expected '{}'", schema, kBaselineSchema));
        return;
      }
    fail(root, fmt::format("not a repro-audit baseline: missing 'schema: {}'", kBaselineSchema));
  }

  SnapshotCell cell(const std::string& key, const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, fmt::format("cell '{}' must be a map of: {}", key, fmt::join(kCellKeys, ", ")));
    SnapshotCell cell;
    cell.key = key;
    bool has_verdict = false;
    for (const auto& entry : node) {
      const auto name = scalar(entry.first, "a cell field");
      const auto& value = entry.second;
      if (name == "verdict") {
        const auto text = scalar(value, "verdict");
        const auto kind = verdict_from_string(text);
        if (!kind) fail(value, fmt::format("unknown verdict '{}'; valid verdicts: {}", text, verdict_names()));
        cell.verdict = *kind;
        has_verdict = true;
      } else if (name == "digest")
        cell.digest = scalar(value, name);
      else if (name == "kernel_digest")
        cell.kernel_digest = scalar(value, name);
      else if (name == "kernels_varied")
        cell.kernels_varied = boolean(value, name);
      else if (name == "median_ns")
        cell.timing.median_ns = integer(value, name);
      else if (name == "p10_ns")
        cell.timing.p10_ns = integer(value, name);
      else if (name == "p90_ns")
        cell.timing.p90_ns = integer(value, name);
      else if (name == "samples")
        cell.timing.samples = static_cast<int>(integer(value, name));
      else
        fail(entry.first, fmt::format("unknown cell field '{}'; valid fields: {}", name, fmt::join(kCellKeys, ", ")));
    }
    if (!has_verdict) fail(node, fmt::format("cell '{}' has no verdict", key));
    return cell;
  }

  std::vector<SnapshotCell> cells(const YAML::Node& node) const {
    std::vector<SnapshotCell> result;
    if (node.IsNull()) return result;
    if (!node.IsMap()) fail(node, "cells must be a map of cell key: {verdict, digest, ...}");
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const auto key = scalar(entry.first, "a cell key");
      if (!seen.insert(key).second) fail(entry.first, fmt::format("cell '{}' appears twice", key));
      result.push_back(cell(key, entry.second));
    }
    return result;
  }

 private:
  bool boolean(const YAML::Node& node, const std::string& what) const {
    const auto text = scalar(node, what);
    if (text != "true" && text != "false") fail(node, fmt::format("{} must be true or false, not '{}'", what, text));
    return text == "true";
  }

  static std::string verdict_names() {
    std::vector<std::string> names;
    for (auto kind :
         {VerdictKind::deterministic, VerdictKind::nondeterministic, VerdictKind::warns, VerdictKind::raises,
          VerdictKind::unsupported, VerdictKind::error, VerdictKind::crashed, VerdictKind::timeout})
      names.push_back(to_string(kind));
    return fmt::format("{}", fmt::join(names, ", "));
  }
};

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot read the {}", path, what));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Baseline baseline_from_report(const Report& report, const std::string& source) {
  Baseline baseline;
  baseline.source = source;
  baseline.tool_version = report.tool_version;
  baseline.environment = report.environment;
  for (const auto& cell : report.cells) {
    const auto& verdict = cell.verdict;
    baseline.cells.push_back({cell.cell.key, verdict.kind, verdict.digest, verdict.kernel_digest,
                              verdict.kernels_varied, verdict.timing, verdict.message});
  }
  return baseline;
}

std::string baseline_to_yaml(const Baseline& baseline) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << kBaselineSchema;
  out << YAML::Key << "tool_version" << YAML::Value;
  emit_string(out, baseline.tool_version);
  out << YAML::Key << "environment" << YAML::Value;
  emit_json(out, baseline.environment.is_object() ? baseline.environment : json::object());
  out << YAML::Key << "cells" << YAML::Value;
  if (baseline.cells.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& cell : baseline.cells) emit_cell(out, cell);
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void write_baseline_file(const Baseline& baseline, const std::string& path) {
  write_file_atomically(path, baseline_to_yaml(baseline));
}

Baseline parse_baseline(const std::string& text, const std::string& source) {
  BaselineReader reader(source);
  const YAML::Node root = reader.load(text);
  if (!root.IsMap())
    throw UserError(source, 1, 1,
                    fmt::format("not a repro-audit baseline: expected a map with 'schema: {}'", kBaselineSchema));
  reader.check_schema(root);
  Baseline baseline;
  baseline.source = source;
  for (const auto& entry : root) {
    const auto key = reader.scalar(entry.first, "a key");
    if (key == "schema") continue;
    if (key == "tool_version")
      baseline.tool_version = reader.scalar(entry.second, key);
    else if (key == "environment") {
      if (!entry.second.IsMap() && !entry.second.IsNull()) reader.fail(entry.second, "environment must be a map");
      baseline.environment = entry.second.IsMap() ? json_from_yaml(entry.second) : json::object();
    } else if (key == "cells")
      baseline.cells = reader.cells(entry.second);
    else
      reader.fail(entry.first, fmt::format("unknown key '{}'; valid keys: {}", key, fmt::join(kTopKeys, ", ")));
  }
  return baseline;
}

Baseline load_baseline_file(const std::string& path) { return parse_baseline(read_text_file(path, "baseline"), path); }

Snapshot load_comparable(const std::string& path) {
  const auto text = read_text_file(path, "report or baseline");
  const auto start = text.find_first_not_of(" \t\r\n");
  // A report is JSON (an object); anything else is read as a baseline, whose errors then apply.
  if (start == std::string::npos || text[start] != '{') return parse_baseline(text, path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& error) {
    throw UserError(fmt::format("{}: byte {}: invalid JSON: {}", path, error.byte, error.what()));
  } catch (const json::exception& error) {  // e.g. a number too large for any numeric type
    throw UserError(fmt::format("{}: invalid JSON: {}", path, error.what()));
  }
  if (j.value("schema", "") == kBaselineSchema) return parse_baseline(text, path);  // JSON is YAML too
  if (j.value("schema", "") != kReportSchema)
    throw UserError(fmt::format("{}: neither a repro-audit report (\"schema\": \"{}\") nor a baseline (schema: {})",
                                path, kReportSchema, kBaselineSchema));
  return baseline_from_report(report_from_json(j, path), path);
}

const SnapshotCell* find_snapshot_cell(const Snapshot& snapshot, const std::string& key) {
  for (const auto& cell : snapshot.cells)
    if (cell.key == key) return &cell;
  return nullptr;
}

bool is_reproducible(const SnapshotCell& cell) {
  return cell.verdict == VerdictKind::deterministic || (cell.verdict == VerdictKind::warns && !cell.digest.empty());
}

bool is_diverging(const SnapshotCell& cell) {
  return cell.verdict == VerdictKind::nondeterministic || (cell.verdict == VerdictKind::warns && cell.digest.empty());
}

bool is_broken(const SnapshotCell& cell) {
  return cell.verdict == VerdictKind::error || cell.verdict == VerdictKind::crashed ||
         cell.verdict == VerdictKind::timeout;
}

}  // namespace repro_audit
