#pragma once
// Escaping for the text formats. Every string from a report (kernel names such as
// `void at::native::kernel<float, 4>(T&&)`, exception messages, cell keys) goes through one of these.
#include <string>
#include <string_view>

namespace repro_audit {

// Text from a file (a host name, a message, a skip reason) for one terminal line: control characters,
// escape codes and line breaks among them, become '?', so a file cannot move the cursor, recolour the
// terminal or fake a line of the tool's own. Every terminal printer shows file text through this.
std::string terminal_text(std::string_view text);

// A message for the terminal: control characters but line breaks become '?', and past `max_bytes`
// the rest is cut and said ("... (N more bytes)"), so a megabyte name in a refused file stays a line.
std::string terminal_message(std::string_view text, std::size_t max_bytes = 4096);

// For HTML and XML text and attribute values: & < > " ' become entities; control characters that
// XML 1.0 forbids (e.g. the ESC of terminal colours in an exception message) become U+FFFD.
std::string xml_escape(std::string_view text);

// Plain Markdown text on one line: punctuation that CommonMark or GitHub would interpret is
// backslash-escaped, line breaks become spaces.
std::string markdown_text(std::string_view text);

// An inline code span on one line; `in_table` escapes '|', which splits a GFM table cell even
// inside a code span.
std::string markdown_code(std::string_view text, bool in_table);

// A fence for a fenced code block around `text`: longer than any run of backticks inside it.
std::string markdown_fence(std::string_view text);

}  // namespace repro_audit
