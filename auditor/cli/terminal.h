#pragma once
// What the terminal can show: colour and cursor codes only where they work, ASCII where the locale
// is not UTF-8.
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>

namespace repro_audit {

// Escape codes on `fd` (colour, and the live progress line's "\r ESC[K"): a tty whose TERM is not
// "dumb", with NO_COLOR unset (https://no-color.org). Else the output holds no escape sequence at all.
bool use_escape_codes(int fd);
// Colour on `fd`: wherever escape codes are used.
bool use_color(int fd);
// The locale's character set, from LC_ALL, LC_CTYPE, LANG (the first set), is UTF-8.
bool utf8_locale();

// Text for a terminal without UTF-8: the marks this tool prints become ASCII ("✓" -> "+",
// "✗" -> "x", "µs" -> "us"); any other non-ASCII character becomes "?".
std::string ascii_text(const std::string& text);

// Writes one message of the tool's, and a line break, to standard error. Strings from files and
// arguments in it are data: their control characters (escape codes among them) show as '?'
// (report/escape.h), line breaks stay. Every message that may hold such a string is written here.
void print_message(std::string_view text);

// Flushes standard output; why its writes failed (ENOSPC for /dev/full, EPIPE for a closed pipe), or
// "" when they did not. A lost matrix or JSON on stdout is a failed command (exit 2).
std::string standard_output_failure();

// While alive, std::cout and std::cerr write through ascii_text.
class AsciiTerminal {
 public:
  AsciiTerminal();
  ~AsciiTerminal();
  AsciiTerminal(const AsciiTerminal&) = delete;
  AsciiTerminal& operator=(const AsciiTerminal&) = delete;

 private:
  std::unique_ptr<std::streambuf> out_, err_;
  std::streambuf* old_out_;
  std::streambuf* old_err_;
};

}  // namespace repro_audit
