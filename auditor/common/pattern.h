#pragma once
// A regular expression (std::regex's ECMAScript grammar) behind a small interface. <regex>'s templates
// take seconds of compile time in every translation unit that instantiates them (4-5 s with g++ -O2,
// about 12 s under clang's sanitizers), so only pattern.cc includes it.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace repro_audit {

// A match's groups: [0] the whole match, then each group in order ("" where a group took no part).
using MatchGroups = std::vector<std::string>;

class Pattern {
 public:
  // Throws std::regex_error (a std::runtime_error) for an expression that is not one.
  explicit Pattern(const std::string& expression);
  ~Pattern();
  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;

  // The whole of `text` matches.
  bool matches(std::string_view text) const;
  // The whole of `text` matches: its groups.
  std::optional<MatchGroups> match(std::string_view text) const;
  // The first match anywhere in `text`: its groups.
  std::optional<MatchGroups> search(std::string_view text) const;
  // Some part of `text` matches.
  bool found_in(std::string_view text) const;
  // Every match in `text`, in order, none overlapping.
  std::vector<MatchGroups> search_all(std::string_view text) const;
  // `text` with every match replaced by `format` ($1, $& ... as std::regex_replace reads them).
  std::string replace(std::string_view text, const std::string& format) const;

 private:
  struct Compiled;
  std::unique_ptr<const Compiled> compiled_;
};

}  // namespace repro_audit
