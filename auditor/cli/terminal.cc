#include "cli/terminal.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include "report/escape.h"

namespace repro_audit {
namespace {

const std::pair<const char*, const char*> kReplacements[] = {
    {"✓", "+"}, {"✗", "x"}, {"µ", "u"}, {"…", "..."}, {"·", "-"}, {"—", "-"}, {"–", "-"}, {"→", "->"}, {"×", "x"},
};

std::size_t sequence_length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;  // a stray continuation byte
}

std::string replacement(const std::string& sequence) {
  for (const auto& [from, to] : kReplacements)
    if (sequence == from) return to;
  return "?";
}

// Passes ASCII through and turns each UTF-8 sequence into its replacement, even when a sequence
// arrives split over several writes.
class AsciiFilter : public std::streambuf {
 public:
  explicit AsciiFilter(std::streambuf* target) : target_(target) {}

 protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) put(static_cast<char>(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* text, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) put(text[i]);
    return n;
  }
  int sync() override { return target_->pubsync(); }

 private:
  void put(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (pending_.empty() && byte < 0x80) {
      target_->sputc(c);
      return;
    }
    pending_ += c;
    if (pending_.size() < sequence_length(static_cast<unsigned char>(pending_[0]))) return;
    const auto text = replacement(pending_);
    target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    pending_.clear();
  }

  std::streambuf* target_;
  std::string pending_;
};

}  // namespace

bool use_escape_codes(int fd) {
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !(term && std::string(term) == "dumb") && !std::getenv("NO_COLOR");
}

bool use_color(int fd) { return use_escape_codes(fd); }

void print_message(std::string_view text) { std::cerr << terminal_message(text) << "\n"; }

bool utf8_locale() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    std::string text = value;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text.find("utf-8") != std::string::npos || text.find("utf8") != std::string::npos;
  }
  return false;  // the C locale
}

std::string ascii_text(const std::string& text) {
  std::string result;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      result += text[i++];
      continue;
    }
    const auto length = std::min(sequence_length(byte), text.size() - i);
    result += replacement(text.substr(i, length));
    i += length;
  }
  return result;
}

AsciiTerminal::AsciiTerminal()
    : out_(std::make_unique<AsciiFilter>(std::cout.rdbuf())),
      err_(std::make_unique<AsciiFilter>(std::cerr.rdbuf())),
      old_out_(std::cout.rdbuf(out_.get())),
      old_err_(std::cerr.rdbuf(err_.get())) {}

AsciiTerminal::~AsciiTerminal() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(old_out_);
  std::cerr.rdbuf(old_err_);
}

std::string standard_output_failure() {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::cout.fail()) return "";
  if (errno != 0) return std::strerror(errno);
  // The write that failed was an earlier one, whose errno is gone: one more byte tells why.
  if (::write(STDOUT_FILENO, "\n", 1) < 0) return std::strerror(errno);
  return "a write failed";
}

}  // namespace repro_audit
