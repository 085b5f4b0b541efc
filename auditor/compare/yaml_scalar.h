#pragma once
// How baseline YAML spells plain values: shared by the baseline's writer and its reader, so a value
// written reads back as the same type.
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

namespace repro_audit {

inline std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty()) return std::nullopt;
  return value;
}

// How a plain (unquoted) YAML scalar reads back: YAML 1.2 core-schema types, else a string.
inline nlohmann::json typed_scalar(const std::string& text) {
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

}  // namespace repro_audit
