// Reading baselines: from yaml-cpp events, one cell at a time, with schema /1 keys migrated.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "compare/baseline.h"
#include "compare/yaml_scalar.h"
#include "common/input_file.h"
#include "common/user_error.h"
#include "config/yaml_reader.h"
#include "plan/cell_grammar.h"
#include "plan/cell_key.h"

namespace repro_audit {
using nlohmann::json;
namespace {

const std::vector<std::string> kTopKeys = {"schema", "tool_version", "input_scheme", "environment", "cells", "kernels"};
const std::vector<std::string> kKernelRecordKeys = {"name", "grid", "block"};
const std::vector<std::string> kCellKeys = {"verdict",        "digest",    "kernel_digest", "input_digest",
                                            "kernels_varied", "median_ns", "p10_ns",        "p90_ns",
                                            "samples",        "ci_low_ns", "ci_high_ns",    "random_sources"};

// A YAML node as the baseline reader holds it, built from events: one top-level value or one cell at
// a time, never the whole file (yaml-cpp's own tree takes about 30 times the text).
struct Piece {
  enum class Kind { null, scalar, sequence, map };
  explicit Piece(Kind kind = Kind::null, const YAML::Mark& mark = {}, bool quoted = false, std::string text = "")
      : kind(kind), mark(mark), quoted(quoted), text(std::move(text)) {}
  Kind kind;
  YAML::Mark mark;
  bool quoted;  // a quoted scalar is a string, whatever it spells
  std::string text;
  std::vector<Piece> items;  // a sequence's items; a map's keys and values, alternating
};

class BaselineReader {
 public:
  explicit BaselineReader(const YamlReader& yaml) : yaml_(yaml) {}

  [[noreturn]] void fail(const Piece& piece, const std::string& message) const { yaml_.fail(piece.mark, message); }

  std::string scalar(const Piece& piece, const std::string& what) const {
    if (piece.kind != Piece::Kind::scalar) fail(piece, what + " must be a single value");
    return piece.text;
  }

  // True for schema /1, whose keys need migrating.
  bool check_schema(const Piece& value) const {
    const auto schema = scalar(value, "schema");
    if (schema != kBaselineSchema && schema != kBaselineSchemaV1)
      fail(value, fmt::format("schema '{}' is not supported; expected '{}' (or '{}')", schema, kBaselineSchema,
                              kBaselineSchemaV1));
    return schema == kBaselineSchemaV1;
  }

  // Absent before the scheme was recorded: those baselines' inputs came from ATen's generator.
  InputScheme input_scheme(const Piece& value) const {
    const auto text = scalar(value, "input_scheme");
    const auto scheme = text.size() == 1 ? input_scheme_from_int(text[0] - '0') : std::nullopt;
    if (!scheme) fail(value, fmt::format("input_scheme '{}' is not one of: {}", text, kInputSchemeNames));
    return *scheme;
  }

  json environment(const Piece& value) const {
    if (value.kind == Piece::Kind::null) return json::object();
    if (value.kind != Piece::Kind::map) fail(value, "environment must be a map");
    return json_of(value);
  }

  SnapshotCell cell(const Piece& key, const Piece& node) const {
    SnapshotCell cell;
    cell.key = scalar(key, "a cell key");
    if (node.kind != Piece::Kind::map)
      fail(node, fmt::format("cell '{}' must be a map of: {}", cell.key, fmt::join(kCellKeys, ", ")));
    bool has_verdict = false;
    for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
      const auto name = scalar(node.items[i], "a cell field");
      const auto& value = node.items[i + 1];
      if (name == "verdict") {
        const auto text = scalar(value, "verdict");
        const auto kind = verdict_from_string(text);
        if (!kind) fail(value, fmt::format("unknown verdict '{}'; valid verdicts: {}", text, verdict_names()));
        cell.verdict = *kind;
        has_verdict = true;
      } else if (name == "digest")
        cell.digest = digest(value, name);
      else if (name == "kernel_digest")
        cell.kernel_digest = digest(value, name);
      else if (name == "input_digest")
        cell.input_digest = digest(value, name);
      else if (name == "random_sources")
        cell.random_sources = scalar(value, name);
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
      else if (name == "ci_low_ns")
        cell.timing.ci_low_ns = integer(value, name);
      else if (name == "ci_high_ns")
        cell.timing.ci_high_ns = integer(value, name);
      else
        fail(node.items[i], fmt::format("unknown cell field '{}'; valid fields: {}", name, fmt::join(kCellKeys, ", ")));
    }
    if (!has_verdict) fail(node, fmt::format("cell '{}' has no verdict", cell.key));
    return cell;
  }

  // One entry of `kernels`: a kernel digest and its records, each a name or {name, grid, block}.
  std::pair<std::string, KernelSequence> kernel_sequence(const Piece& key, const Piece& node) const {
    auto digest_text = digest(key, "a kernel sequence digest");
    if (node.kind != Piece::Kind::sequence)
      fail(node, fmt::format("kernel sequence {} must be a list of kernel records", digest_text));
    if (node.items.size() > kMaxBaselineKernelRecords)
      fail(node, fmt::format("kernel sequence {} has {} records; at most {} are read", digest_text, node.items.size(),
                             kMaxBaselineKernelRecords));
    auto records = std::make_shared<std::vector<KernelRecord>>();
    records->reserve(node.items.size());
    for (const auto& item : node.items) {
      auto record = kernel_record(item);
      if (const auto problem = kernel_record_problem(record); !problem.empty())
        fail(item, fmt::format("malformed kernel record in sequence {}: {}", digest_text, problem));
      records->push_back(std::move(record));
    }
    return {std::move(digest_text), std::move(records)};
  }

 private:
  // yaml-cpp tags quoted scalars "!" and plain ones "?": a quoted "2.0" stays a string.
  json json_of(const Piece& piece) const {
    switch (piece.kind) {
      case Piece::Kind::map: {
        json object = json::object();
        for (std::size_t i = 0; i + 1 < piece.items.size(); i += 2)
          object[scalar(piece.items[i], "a key")] = json_of(piece.items[i + 1]);
        return object;
      }
      case Piece::Kind::sequence: {
        json array = json::array();
        for (const auto& item : piece.items) array.push_back(json_of(item));
        return array;
      }
      case Piece::Kind::scalar:
        return piece.quoted ? json(piece.text) : typed_scalar(piece.text);
      case Piece::Kind::null:
        break;
    }
    return nullptr;
  }

  KernelRecord kernel_record(const Piece& piece) const {
    if (piece.kind == Piece::Kind::scalar) return {piece.text, "", ""};
    if (piece.kind != Piece::Kind::map)
      fail(piece, fmt::format("a kernel record must be a name or a map of: {}", fmt::join(kKernelRecordKeys, ", ")));
    KernelRecord record;
    bool has_name = false;
    for (std::size_t i = 0; i + 1 < piece.items.size(); i += 2) {
      const auto name = scalar(piece.items[i], "a kernel record field");
      const auto& value = piece.items[i + 1];
      if (name == "name") {
        record.name = scalar(value, name);
        has_name = true;
      } else if (name == "grid") {
        record.grid = scalar(value, name);
      } else if (name == "block") {
        record.block = scalar(value, name);
      } else {
        fail(piece.items[i], fmt::format("unknown kernel record field '{}'; valid fields: {}", name,
                                         fmt::join(kKernelRecordKeys, ", ")));
      }
    }
    if (!has_name) fail(piece, "a kernel record has no name");
    return record;
  }

  std::string digest(const Piece& piece, const std::string& what) const {
    auto text = scalar(piece, what);
    if (!is_digest(text)) fail(piece, fmt::format("{} '{}' is not 32 lower-case hex digits", what, text));
    return text;
  }

  std::int64_t integer(const Piece& piece, const std::string& what) const {
    const auto text = scalar(piece, what);
    const auto value = parse_integer(text);
    if (!value || *value < 0) fail(piece, fmt::format("{} must be a non-negative integer, not '{}'", what, text));
    return *value;
  }

  bool boolean(const Piece& piece, const std::string& what) const {
    const auto text = scalar(piece, what);
    if (text != "true" && text != "false") fail(piece, fmt::format("{} must be true or false, not '{}'", what, text));
    return text == "true";
  }

  const YamlReader& yaml_;
};

// Builds pieces from the checked events of YamlReader::stream, and reads each top-level entry and
// each cell as soon as it is complete.
class BaselineEvents : public YAML::EventHandler {
 public:
  BaselineEvents(const BaselineReader& reader, Baseline& baseline) : reader_(reader), baseline_(baseline) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}  // the stream sends the node an alias names
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { add(Piece(Piece::Kind::null, mark)); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t, const std::string& value) override {
    add(Piece(Piece::Kind::scalar, mark, tag == "!", value));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(Piece(Piece::Kind::sequence, mark));
  }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(Piece(Piece::Kind::map, mark));
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

  // After the last event: what needs the whole file. True when the keys follow rule 1.
  bool finish() const {
    if (!root_) not_a_baseline();
    if (!has_schema_)
      reader_.fail(*root_, fmt::format("not a repro-audit baseline: missing 'schema: {}'", kBaselineSchema));
    if (deferred_) throw *deferred_;
    return rule1_keys_;
  }

  // Each cell gets the records of its kernel digest; a digest without an entry leaves it without names.
  void attach_kernels() const {
    for (auto& cell : baseline_.cells)
      if (const auto it = kernel_sequences_.find(cell.kernel_digest); it != kernel_sequences_.end())
        cell.kernels = it->second;
  }

 private:
  [[noreturn]] void not_a_baseline() const {
    reader_.fail(Piece(), fmt::format("not a repro-audit baseline: expected a map with 'schema: {}'", kBaselineSchema));
  }

  void open(Piece&& piece) {
    if (open_.empty()) {
      if (piece.kind != Piece::Kind::map) not_a_baseline();
      root_ = Piece(piece.kind, piece.mark);
    }
    // The cells and the kernel sequences are read one by one, never gathered into their maps.
    if (open_.size() == 1 && piece.kind == Piece::Kind::map && root_key_ && root_key_->kind == Piece::Kind::scalar) {
      in_cells_ = root_key_->text == "cells";
      in_kernels_ = root_key_->text == "kernels";
    }
    open_.push_back(std::move(piece));
  }

  void close() {
    auto piece = std::move(open_.back());
    open_.pop_back();
    if (open_.size() == 1) in_cells_ = in_kernels_ = false;
    if (!open_.empty()) add(std::move(piece));
  }

  void add(Piece&& piece) {
    if (open_.empty()) not_a_baseline();  // the whole document is a single value
    if (open_.size() == 1) {
      if (!root_key_) return void(root_key_ = std::move(piece));
      root_entry(*root_key_, piece);
      root_key_.reset();
    } else if (open_.size() == 2 && in_cells_) {
      if (!entry_key_) return void(entry_key_ = std::move(piece));
      read([&] { baseline_.cells.push_back(reader_.cell(*entry_key_, piece)); });
      entry_key_.reset();
    } else if (open_.size() == 2 && in_kernels_) {
      if (!entry_key_) return void(entry_key_ = std::move(piece));
      read([&] { kernel_sequences_.insert(reader_.kernel_sequence(*entry_key_, piece)); });
      entry_key_.reset();
    } else {
      open_.back().items.push_back(std::move(piece));
    }
  }

  void root_entry(const Piece& key, const Piece& value) {
    if (key.kind == Piece::Kind::scalar && key.text == "schema") {
      rule1_keys_ = reader_.check_schema(value);
      has_schema_ = true;
      return;
    }
    read([&] {
      const auto name = reader_.scalar(key, "a key");
      if (name == "tool_version")
        baseline_.tool_version = reader_.scalar(value, name);
      else if (name == "input_scheme")
        baseline_.input_scheme = reader_.input_scheme(value);
      else if (name == "environment")
        baseline_.environment = reader_.environment(value);
      else if (name == "cells" && value.kind != Piece::Kind::map && value.kind != Piece::Kind::null)
        reader_.fail(value, "cells must be a map of cell key: {verdict, digest, ...}");
      else if (name == "kernels" && value.kind != Piece::Kind::map && value.kind != Piece::Kind::null)
        reader_.fail(value, "kernels must be a map of kernel digest: [kernel records]");
      else if (name != "cells" && name != "kernels")
        reader_.fail(key, fmt::format("unknown key '{}'; valid keys: {}", name, fmt::join(kTopKeys, ", ")));
    });
  }

  // Until the schema is seen, a mistake waits: a file without one is first of all not a baseline.
  template <typename Read>
  void read(Read&& read_piece) {
    if (deferred_) return;
    if (has_schema_) return read_piece();
    try {
      read_piece();
    } catch (const UserError& error) {
      deferred_ = error;
    }
  }

  const BaselineReader& reader_;
  Baseline& baseline_;
  std::vector<Piece> open_;  // the pieces being built, the root first
  std::optional<Piece> root_;
  std::optional<Piece> root_key_;
  std::optional<Piece> entry_key_;  // a cell key or a kernel digest, until its value is complete
  bool in_cells_ = false;
  bool in_kernels_ = false;
  std::unordered_map<std::string, KernelSequence> kernel_sequences_;
  bool has_schema_ = false;
  bool rule1_keys_ = false;
  std::optional<UserError> deferred_;
};

// Schema /1 named every applicable setting in its keys; rule 2 names only those off their default.
void migrate_rule1_keys(Baseline& baseline) {
  std::map<std::string, std::string> old_key_of;
  for (auto& cell : baseline.cells) {
    const auto key = migrate_rule1_key(cell.key);
    if (!key)
      throw UserError(fmt::format("{}: cell key '{}' is not probe/variant@device|setting=value,... ({})",
                                  baseline.source, cell.key, kBaselineSchemaV1));
    const auto [it, added] = old_key_of.emplace(*key, cell.key);
    if (!added)
      throw UserError(fmt::format("{}: cell keys '{}' and '{}' both become '{}' under the current key rule",
                                  baseline.source, it->second, cell.key, *key));
    cell.key = *key;
  }
}
}  // namespace

Baseline parse_baseline(const std::string& text, const std::string& source) {
  const YamlReader yaml(source);
  const BaselineReader reader(yaml);
  Baseline baseline;
  baseline.source = source;
  BaselineEvents events(reader, baseline);
  yaml.stream(text, events);
  if (events.finish()) migrate_rule1_keys(baseline);
  events.attach_kernels();
  // Keys reach folder names, scripts, Markdown, HTML and terminals: the grammar a report's keys keep.
  std::set<std::string> seen;
  for (const auto& cell : baseline.cells) {
    if (const auto problem = cell_key_problem(cell.key); !problem.empty())
      throw UserError(fmt::format("{}: malformed baseline: {}", source, problem));
    if (!seen.insert(cell.key).second)
      throw UserError(fmt::format("{}: malformed baseline: the key {} appears twice", source, shown(cell.key)));
  }
  return baseline;
}

}  // namespace repro_audit
