#include "config/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/pattern.h"
#include "common/input_file.h"
#include "config/model_config.h"
#include "config/settings.h"
#include "common/user_error.h"
#include "config/yaml_reader.h"

namespace repro_audit {
namespace {

const std::vector<std::string> kConfigKeys = {"device",       "probes",  "kind",    "profiles",  "axes",
                                              "matrix",       "repeats", "warmup",  "processes", "seed",
                                              "input_scheme", "timeout", "fail_on", "models"};

class Reader : public YamlReader {
 public:
  Reader(std::string source, const Catalogue& catalogue) : YamlReader(std::move(source)), catalogue_(catalogue) {}

  std::vector<std::string> scalars(const YAML::Node& node, const std::string& what) const {
    std::vector<std::string> values;
    if (node.IsScalar()) return {node.Scalar()};
    if (!node.IsSequence()) fail(node, what + " must be a value or a list of values");
    for (const auto& item : node) values.push_back(scalar(item, what));
    return values;
  }

  int integer(const YAML::Node& node, const std::string& what, int low, int high) const {
    const auto text = scalar(node, what);
    try {
      std::size_t used = 0;
      const long value = std::stol(text, &used);
      if (used == text.size() && value >= low && value <= high) return static_cast<int>(value);
    } catch (const std::exception&) {
    }
    fail(node, fmt::format("{} must be an integer from {} to {}, not '{}'", what, low, high, text));
  }

  std::vector<ProbeSelection> probes(const YAML::Node& node) const {
    std::vector<ProbeSelection> result;
    // An empty list would otherwise mean "the default suite": a surprise when the list was meant to be filled.
    if ((node.IsSequence() || node.IsMap()) && node.size() == 0)
      fail(node, "probes is empty; list probes, or leave the key out for the default suite");
    if (node.IsMap()) {
      for (const auto& entry : node) {
        ProbeSelection selection{scalar(entry.first, "a probe name"), {}};
        check_probe(entry.first, selection.probe);
        if (!(entry.second.IsScalar() && entry.second.Scalar() == "all"))
          for (const auto& variant_node :
               entry.second.IsSequence() ? entry.second : YAML::Node(YAML::NodeType::Sequence)) {
            const auto variant = scalar(variant_node, "a variant name");
            check_variant(variant_node, selection.probe, variant);
            selection.variants.push_back(variant);
          }
        if (!entry.second.IsSequence() && !(entry.second.IsScalar() && entry.second.Scalar() == "all"))
          fail(entry.second, "variants must be a list of names or 'all'");
        result.push_back(selection);
      }
      return result;
    }
    if (!node.IsSequence()) fail(node, "probes must be a list of names or a map of name: [variants]");
    for (const auto& item : node) {
      const auto name = scalar(item, "a probe name");
      check_probe(item, name);
      result.push_back({name, {}});
    }
    return result;
  }

  void check_probe(const YAML::Node& node, const std::string& name) const {
    if (!find_probe(catalogue_, name))
      fail(node, fmt::format("unknown probe '{}'; valid probes: {}", name, fmt::join(probe_names(catalogue_), ", ")));
  }

  void check_variant(const YAML::Node& node, const std::string& probe, const std::string& variant) const {
    const auto* info = find_probe(catalogue_, probe);
    if (info->find_variant(variant)) return;
    std::vector<std::string> names;
    for (const auto& v : info->variants) names.push_back(v.name);
    fail(node,
         fmt::format("unknown variant '{}' of probe '{}'; valid variants: {}", variant, probe, fmt::join(names, ", ")));
  }

  std::map<std::string, std::vector<std::string>> axes(const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, "axes must be a map of setting: [values]");
    std::map<std::string, std::vector<std::string>> result;
    for (const auto& entry : node) {
      const auto name = scalar(entry.first, "a setting name");
      const auto* spec = find_setting(name);
      if (!spec)
        fail(entry.first,
             fmt::format("unknown setting '{}'; valid settings: {}", name, fmt::join(setting_names(), ", ")));
      std::vector<std::string> values;
      const auto items = entry.second.IsSequence() ? entry.second : YAML::Node(YAML::NodeType::Sequence);
      if (entry.second.IsScalar())
        values.push_back(checked_value(entry.second, *spec));
      else if (entry.second.IsSequence())
        for (const auto& item : items) {
          values.push_back(checked_value(item, *spec));
          if (std::count(values.begin(), values.end(), values.back()) > 1)
            fail(item, fmt::format("axis '{}' names the value {} twice", name, values.back()));
        }
      else
        fail(entry.second, "an axis must be a value or a list of values");
      if (values.empty()) fail(entry.second, fmt::format("axis '{}' has no values", name));
      result[name] = values;
    }
    return result;
  }

  std::string checked_value(const YAML::Node& node, const SettingSpec& spec) const {
    const auto value = normalised_value(spec, scalar(node, "a setting value"));
    if (!is_valid_value(spec, value))
      fail(node, fmt::format("invalid value '{}' for setting '{}'; valid values: {}", value, spec.name,
                             describe_values(spec)));
    return value;
  }

 private:
  const Catalogue& catalogue_;
};

}  // namespace

Config parse_config(const std::string& text, const std::string& source, const Catalogue& catalogue) {
  Config config;
  config.source = source;
  Reader reader(source, catalogue);
  const YAML::Node root = reader.load(text);
  if (root.IsNull()) return config;
  if (!root.IsMap())
    reader.fail(root, "the config must be a map of keys: " + fmt::format("{}", fmt::join(kConfigKeys, ", ")));
  bool has_profiles = false;
  // The repeats or processes value, for the "too few runs" message. Not a plain YAML::Node assigned
  // later: yaml-cpp's Node assignment rewrites the node it refers to (here the root being iterated).
  std::optional<YAML::Node> runs_node;
  for (const auto& entry : root) {
    const auto key = reader.scalar(entry.first, "a key");
    const auto& value = entry.second;
    if (key == "device") {
      config.device = reader.scalar(value, "device");
      try {
        validate_device(config.device, "device");
      } catch (const UserError& error) {
        reader.fail(value, error.what());
      }
    } else if (key == "probes") {
      config.probes = reader.probes(value);
    } else if (key == "kind") {
      const auto kind = probe_kind_from_string(reader.scalar(value, "kind"));
      if (!kind) reader.fail(value, fmt::format("kind must be one of: {}", kProbeKindNames));
      config.kind = *kind;
    } else if (key == "profiles") {
      has_profiles = true;
      config.profiles = reader.scalars(value, "profiles");
      if (config.profiles.empty()) reader.fail(value, "profiles is empty: an audit needs at least one profile");
      for (std::size_t i = 0; i < config.profiles.size(); ++i)
        if (!profiles().count(config.profiles[i]))
          reader.fail(value.IsSequence() ? value[i] : value,
                      fmt::format("unknown profile '{}'; valid profiles: {}", config.profiles[i],
                                  fmt::join(profile_names(), ", ")));
    } else if (key == "axes") {
      config.axes = reader.axes(value);
    } else if (key == "matrix") {
      if (has_profiles) reader.fail(entry.first, "give either profiles or matrix, not both");
      config.axes = reader.axes(value);
      config.full_matrix = true;
      if (config.axes.empty()) reader.fail(value, "matrix is empty: give at least one setting: [values]");
    } else if (key == "repeats") {
      config.repeats = reader.integer(value, "repeats", 1, 100000);
      runs_node.emplace(value);
    } else if (key == "warmup") {
      config.warmup = reader.integer(value, "warmup", 0, 1000);
    } else if (key == "processes") {
      config.processes = reader.integer(value, "processes", 1, 1000);
      runs_node.emplace(value);
    } else if (key == "seed") {
      config.seed = static_cast<std::uint64_t>(reader.integer(value, "seed", 0, 2147483647));
    } else if (key == "input_scheme") {
      const auto text = reader.scalar(value, "input_scheme");
      const auto scheme = text.size() == 1 ? input_scheme_from_int(text[0] - '0') : std::nullopt;
      if (!scheme) reader.fail(value, fmt::format("input_scheme must be one of: {}", kInputSchemeNames));
      config.input_scheme = *scheme;
    } else if (key == "timeout") {
      config.timeout_seconds = reader.integer(value, "timeout", 1, 86400);
    } else if (key == "fail_on") {
      const auto fail_on = fail_on_from_string(reader.scalar(value, "fail_on"));
      if (!fail_on) reader.fail(value, fmt::format("fail_on must be one of: {}", kFailOnNames));
      config.fail_on = *fail_on;
    } else if (key == "models") {
      const auto folder = std::filesystem::path(source).parent_path().string();
      config.models = read_models(reader, value, folder);
    } else {
      reader.fail(entry.first, fmt::format("unknown key '{}'; valid keys: {}", key, fmt::join(kConfigKeys, ", ")));
    }
  }
  if (has_profiles && config.full_matrix) reader.fail(root, "give either profiles or matrix, not both");
  if (config.repeats * config.processes < 2) reader.fail(runs_node ? *runs_node : root, too_few_runs(config));
  return config;
}

std::string too_few_runs(const Config& config) {
  return fmt::format(
      "repeats x processes is {} x {}: a verdict needs at least 2 timed runs to compare; raise repeats or processes",
      config.repeats, config.processes);
}

int runs_to_detect(double rate) {
  // n - 1 >= ln(0.05) / ln(1 - rate); the small slack keeps an exact quotient from rounding up.
  const double comparisons = std::ceil(std::log(0.05) / std::log1p(-rate) - 1e-9);
  return 1 + static_cast<int>(std::max(1.0, comparisons));
}

int repeats_to_detect(double rate, int processes, int warmup) {
  const int per_process = (runs_to_detect(rate) + processes - 1) / processes;
  return std::max(1, per_process - warmup);
}

void validate_config(const Config& config, const Catalogue& catalogue, const std::string& where) {
  validate_device(config.device, where);
  for (const auto& selection : config.probes) validate_probe_selection(selection, catalogue, where);
  if (!config.full_matrix && config.profiles.empty())
    throw UserError(where + ": no profiles: an audit needs at least one profile");
  for (const auto& profile : config.profiles) validate_profile(profile, where);
  if (config.full_matrix && config.axes.empty()) throw UserError(where + ": the full matrix needs at least one axis");
  for (const auto& [name, values] : config.axes) {
    if (values.empty()) throw UserError(fmt::format("{}: axis '{}' has no values", where, name));
    validate_axis(name, values, where);
  }
  const auto check_range = [&](const char* what, double value, double low, double high) {
    if (!(value >= low && value <= high))
      throw UserError(fmt::format("{}: {} must be from {} to {}, not {}", where, what, low, high, value));
  };
  check_range("repeats", config.repeats, 1, 100000);
  check_range("warmup", config.warmup, 0, 1000);
  check_range("processes", config.processes, 1, 1000);
  check_range("timeout", config.timeout_seconds, 0, 86400);
  if (config.detect) check_range("detect", *config.detect, kMinDetectRate, kMaxDetectRate);
  if (config.repeats * config.processes < 2) throw UserError(where + ": " + too_few_runs(config));
}

Config load_config_file(const std::string& path, const Catalogue& catalogue) {
  return parse_config(read_input_file(path, "config", kMaxConfigBytes), path, catalogue);
}

void validate_probe_selection(const ProbeSelection& selection, const Catalogue& catalogue, const std::string& where) {
  const auto* info = find_probe(catalogue, selection.probe);
  if (!info)
    throw UserError(fmt::format("{}: unknown probe '{}'; valid probes: {}", where, selection.probe,
                                fmt::join(probe_names(catalogue), ", ")));
  for (const auto& variant : selection.variants)
    if (!info->find_variant(variant)) {
      std::vector<std::string> names;
      for (const auto& v : info->variants) names.push_back(v.name);
      throw UserError(fmt::format("{}: unknown variant '{}' of probe '{}'; valid variants: {}", where, variant,
                                  selection.probe, fmt::join(names, ", ")));
    }
}

void validate_profile(const std::string& profile, const std::string& where) {
  if (!profiles().count(profile))
    throw UserError(
        fmt::format("{}: unknown profile '{}'; valid profiles: {}", where, profile, fmt::join(profile_names(), ", ")));
}

void validate_axis(const std::string& name, const std::vector<std::string>& values, const std::string& where) {
  const auto* spec = find_setting(name);
  if (!spec)
    throw UserError(
        fmt::format("{}: unknown setting '{}'; valid settings: {}", where, name, fmt::join(setting_names(), ", ")));
  for (const auto& value : values)
    if (!is_valid_value(*spec, value))
      throw UserError(fmt::format("{}: invalid value '{}' for setting '{}'; valid values: {}", where, value, name,
                                  describe_values(*spec)));
}

void validate_device(const std::string& device, const std::string& where) {
  static const Pattern pattern("auto|cpu|cuda(:[0-9]+)?");
  if (!pattern.matches(device))
    throw UserError(fmt::format("{}: invalid device '{}'; valid devices: auto, cpu, cuda, cuda:N", where, device));
}

}  // namespace repro_audit
