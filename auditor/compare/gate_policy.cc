#include "compare/gate_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>

#include "common/input_file.h"
#include "common/user_error.h"
#include "config/yaml_reader.h"

namespace repro_audit {
namespace {

const std::vector<std::string> kPolicyKeys = {"slower_threshold", "fail", "warn", "unchanged_platform",
                                              "changed_platform"};
const std::vector<std::string> kRuleKeys = {"fail", "warn"};

bool contains(const std::vector<Change>& list, Change change) {
  return std::find(list.begin(), list.end(), change) != list.end();
}

std::string change_names() {
  std::vector<std::string> names;
  for (auto change : all_changes()) names.push_back(to_string(change));
  return fmt::format("{}", fmt::join(names, ", "));
}

class PolicyReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  std::vector<Change> changes(const YAML::Node& node, const std::string& what) const {
    std::vector<Change> list;
    if (node.IsNull()) return list;
    std::vector<YAML::Node> items;
    if (node.IsScalar())
      items.push_back(node);
    else if (node.IsSequence())
      for (const auto& item : node) items.push_back(item);
    else
      fail(node, what + " must be a list of classes");
    for (const auto& item : items) {
      const auto name = scalar(item, "a class");
      const auto change = change_from_string(name);
      if (!change) fail(item, fmt::format("unknown class '{}' in {}; valid classes: {}", name, what, change_names()));
      list.push_back(*change);
    }
    return list;
  }

  // Reads fail/warn from `node` (the root or a platform section) into `rules`; true when any was given.
  bool rules(const YAML::Node& node, const std::string& where, GateRules& rules, bool allow_other_keys) const {
    bool given = false;
    GateRules read;
    for (const auto& entry : node) {
      const auto key = scalar(entry.first, "a key");
      if (key == "fail")
        read.fail = changes(entry.second, where + "fail");
      else if (key == "warn")
        read.warn = changes(entry.second, where + "warn");
      else if (allow_other_keys)
        continue;
      else
        fail(entry.first,
             fmt::format("unknown key '{}' in {}; valid keys: {}", key, where, fmt::join(kRuleKeys, ", ")));
      given = true;
    }
    if (!given) return false;
    for (auto change : read.fail)
      if (contains(read.warn, change))
        fail(node, fmt::format("class '{}' is listed under both {}fail and {}warn", to_string(change), where, where));
    rules = read;
    return true;
  }

  double threshold(const YAML::Node& node) const {
    const auto text = scalar(node, "slower_threshold");
    std::istringstream in(text);
    double value = -1;
    if (!(in >> value) || in.peek() != std::char_traits<char>::eof() || value < 0 || value > 100)
      fail(node, fmt::format("slower_threshold must be a number from 0 to 100 (0.10 means 10%), not '{}'", text));
    return value;
  }
};

}  // namespace

const char* to_string(GateAction action) {
  switch (action) {
    case GateAction::ignore:
      return "ignore";
    case GateAction::warn:
      return "warn";
    case GateAction::fail:
      return "fail";
  }
  return "?";
}

GatePolicy default_gate_policy() {
  GatePolicy policy;
  policy.unchanged_platform = {{Change::new_nondeterminism, Change::broke, Change::drift},
                               {Change::kernels_changed, Change::slower}};
  policy.changed_platform = {{Change::new_nondeterminism, Change::broke},
                             {Change::drift, Change::kernels_changed, Change::slower}};
  return policy;
}

GatePolicy parse_gate_policy(const std::string& text, const std::string& source) {
  PolicyReader reader(source);
  const YAML::Node root = reader.load(text);
  auto policy = default_gate_policy();
  policy.source = source;
  if (root.IsNull()) return policy;
  if (!root.IsMap())
    reader.fail(root, fmt::format("a gate policy must be a map of keys: {}", fmt::join(kPolicyKeys, ", ")));
  GateRules both;
  if (reader.rules(root, "", both, true)) policy.unchanged_platform = policy.changed_platform = both;
  for (const auto& entry : root) {
    const auto key = reader.scalar(entry.first, "a key");
    const auto& value = entry.second;
    if (key == "slower_threshold")
      policy.slower_threshold = reader.threshold(value);
    else if (key == "unchanged_platform" || key == "changed_platform") {
      if (!value.IsMap()) reader.fail(value, key + " must be a map with fail and warn lists");
      reader.rules(value, key + ".", key == "changed_platform" ? policy.changed_platform : policy.unchanged_platform,
                   false);
    } else if (key != "fail" && key != "warn") {
      reader.fail(entry.first, fmt::format("unknown key '{}'; valid keys: {}", key, fmt::join(kPolicyKeys, ", ")));
    }
  }
  return policy;
}

GatePolicy load_gate_policy_file(const std::string& path) {
  return parse_gate_policy(read_input_file(path, "gate policy", kMaxConfigBytes), path);
}

GateAction action_for(const GatePolicy& policy, bool platform_changed, Change change) {
  const auto& rules = platform_changed ? policy.changed_platform : policy.unchanged_platform;
  if (contains(rules.fail, change)) return GateAction::fail;
  if (contains(rules.warn, change)) return GateAction::warn;
  return GateAction::ignore;
}

GateResult gate_outcome(const Comparison& comparison, const GatePolicy& policy) {
  GateResult result;
  result.platform_changed = comparison.platform_changed;
  result.policy_source = policy.source;
  for (const auto& cell : comparison.cells) {
    GateFinding failing{cell.key, {}, cell.detail};
    GateFinding warning{cell.key, {}, cell.detail};
    for (auto change : cell.changes) {
      const auto action = action_for(policy, comparison.platform_changed, change);
      if (action == GateAction::fail)
        failing.triggers.push_back(change);
      else if (action == GateAction::warn)
        warning.triggers.push_back(change);
    }
    if (!failing.triggers.empty())
      result.failures.push_back(failing);
    else if (!warning.triggers.empty())
      result.warnings.push_back(warning);
  }
  result.passed = result.failures.empty();
  return result;
}

int gate_exit_code(const GateResult& result) { return result.passed ? 0 : 1; }

const GateFinding* find_finding(const GateResult& result, const std::string& key, GateAction* action) {
  for (const auto& finding : result.failures)
    if (finding.key == key) {
      if (action) *action = GateAction::fail;
      return &finding;
    }
  for (const auto& finding : result.warnings)
    if (finding.key == key) {
      if (action) *action = GateAction::warn;
      return &finding;
    }
  if (action) *action = GateAction::ignore;
  return nullptr;
}

}  // namespace repro_audit
