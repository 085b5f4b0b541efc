#pragma once
// Text that goes into a Python script or a folder name as data: literals, docstrings, identifiers.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace repro_audit {

// A Python string literal holding `text` as data: JSON's string escapes are Python's too, and bytes that
// are not UTF-8 become U+FFFD instead of a broken script.
std::string quoted(const std::string& text);
// A JSON value as data the script parses, never as Python source.
std::string parsed(const nlohmann::json& value);
// Text inside the script's """docstrings""": a quote or backslash cannot end or bend them.
std::string docstring_text(std::string_view text);
// A template's lines, their common indentation removed, indented as a function body.
std::string function_body(const std::string& code);

// A folder name for a cell key: letters, digits, '-', '_', '.', '=' kept, the rest '_'; one that would
// start with anything but a letter, digit or '_' ("", "..", a hidden name) gets a '_' in front.
std::string folder_name_of(const std::string& key);

// A Python identifier of ASCII letters, digits and '_' (an op or overload name the script spells as code).
bool is_identifier(const std::string& text);

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace repro_audit
