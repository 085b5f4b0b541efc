#include "report/escape.h"

#include <fmt/format.h>

#include <algorithm>

namespace repro_audit {
namespace {

std::string one_line(std::string_view text) {
  std::string line(text);
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return line;
}

std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string terminal_text(std::string_view text) {
  std::string shown(text);
  for (auto& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return shown;
}

std::string terminal_message(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = std::min(max_bytes, text.size());
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  std::string shown(text.substr(0, cut));
  for (auto& c : shown)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
  if (cut < text.size()) shown += fmt::format("... ({} more bytes)", text.size() - cut);
  return shown;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t')
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  return out;
}

std::string markdown_text(std::string_view text) {
  // '>', '#' and '!' matter only at a line start or before '[', which never occurs mid-cell.
  static constexpr std::string_view special = "\\`*_[]<|~&";
  std::string out;
  for (char c : one_line(text)) {
    if (special.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_code(std::string_view text, bool in_table) {
  std::string body;
  for (char c : one_line(text)) {
    if (in_table && c == '|') body += '\\';
    body += c;
  }
  // A span holding backticks needs a longer delimiter, and spaces when it starts or ends with one.
  const std::string ticks(longest_backtick_run(body) + 1, '`');
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return ticks + (pad ? " " : "") + body + (pad ? " " : "") + ticks;
}

std::string markdown_fence(std::string_view text) {
  return std::string(std::max<std::size_t>(3, longest_backtick_run(text) + 1), '`');
}

}  // namespace repro_audit
