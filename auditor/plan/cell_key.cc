#include "plan/cell_key.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace repro_audit {
namespace {

bool is_default(const std::string& name, const std::string& value) {
  const auto* spec = find_setting(name);
  return spec && value == spec->default_value;
}

// FlagSet is a std::map: its iteration order is the name order the rule asks for.
std::string key_of(const std::string& subject, const FlagSet& settings) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : settings)
    if (value != kNotApplicable && !is_default(name, value)) parts.push_back(name + "=" + value);
  if (parts.empty()) return subject;
  return fmt::format("{}|{}", subject, fmt::join(parts, ","));
}

}  // namespace

std::string cell_key(const std::string& probe, const std::string& variant, const std::string& device,
                     const FlagSet& settings) {
  return key_of(fmt::format("{}/{}@{}", probe, variant, device), settings);
}

std::optional<ParsedKey> parse_cell_key(const std::string& key) {
  const auto bar = std::min(key.find('|'), key.size());
  const auto at = key.find('@');
  const auto slash = key.find('/');
  if (at == std::string::npos || at > bar || slash == 0 || slash >= at || at + 1 == bar) return std::nullopt;
  ParsedKey parsed{key.substr(0, slash), key.substr(slash + 1, at - slash - 1), key.substr(at + 1, bar - at - 1), {}};
  if (bar + 1 >= key.size()) return parsed;  // no settings, or an empty list after '|'
  if (key.back() == ',') return std::nullopt;
  for (std::size_t start = bar + 1; start < key.size();) {
    auto end = key.find(',', start);
    if (end == std::string::npos) end = key.size();
    const auto part = key.substr(start, end - start);
    const auto equals = part.find('=');
    if (equals == std::string::npos || equals == 0 ||
        !parsed.settings.emplace(part.substr(0, equals), part.substr(equals + 1)).second)
      return std::nullopt;
    start = end + 1;
  }
  return parsed;
}

std::optional<std::string> migrate_rule1_key(const std::string& key) {
  if (key.find('|') == std::string::npos) return std::nullopt;
  const auto parsed = parse_cell_key(key);
  if (!parsed) return std::nullopt;
  return key_of(fmt::format("{}/{}@{}", parsed->probe, parsed->variant, parsed->device), parsed->settings);
}

}  // namespace repro_audit
