#include "repro/python_text.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace repro_audit {

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string parsed(const nlohmann::json& value) {
  return "json.loads(" + quoted(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + ")";
}

std::string docstring_text(std::string_view text) {
  std::string safe;
  for (const char c : valid_utf8(text)) {
    if (c == '\\' || c == '"')
      safe += {'\\', c};
    else
      safe += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  return safe;
}

std::string function_body(const std::string& code) {
  std::vector<std::string> lines;
  std::istringstream in(code);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.front().find_first_not_of(" \t") == std::string::npos) lines.erase(lines.begin());
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos) lines.pop_back();
  std::size_t common = std::string::npos;
  for (const auto& line : lines)
    if (const auto first = line.find_first_not_of(' '); first != std::string::npos) common = std::min(common, first);
  std::string body;
  for (const auto& line : lines)
    body += line.find_first_not_of(' ') == std::string::npos ? "\n" : "    " + line.substr(common) + "\n";
  return body;
}

std::string folder_name_of(const std::string& key) {
  std::string name;
  for (const char c : key)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '=' ? c : '_';
  // Never "", "." or "..", nor hidden: a name that starts with a letter, digit or '_' stays in its folder.
  if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_')) name = "_" + name;
  return name;
}

bool is_identifier(const std::string& text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string valid_utf8(std::string_view text) {
  // dump() writes bytes that are not UTF-8 as U+FFFD; parsing that literal back gives the text.
  return nlohmann::json::parse(
             nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

}  // namespace repro_audit
