#include "common/pattern.h"

#include <iterator>
#include <regex>

namespace repro_audit {

struct Pattern::Compiled {
  std::regex regex;
};

namespace {

using Match = std::match_results<std::string_view::const_iterator>;

MatchGroups groups_of(const Match& match) {
  MatchGroups groups;
  groups.reserve(match.size());
  for (const auto& group : match) groups.push_back(group.str());
  return groups;
}

}  // namespace

Pattern::Pattern(const std::string& expression)
    : compiled_(std::make_unique<const Compiled>(Compiled{std::regex(expression)})) {}
Pattern::~Pattern() = default;
Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;

bool Pattern::matches(std::string_view text) const {
  return std::regex_match(text.begin(), text.end(), compiled_->regex);
}

std::optional<MatchGroups> Pattern::match(std::string_view text) const {
  Match match;
  if (!std::regex_match(text.begin(), text.end(), match, compiled_->regex)) return std::nullopt;
  return groups_of(match);
}

std::optional<MatchGroups> Pattern::search(std::string_view text) const {
  Match match;
  if (!std::regex_search(text.begin(), text.end(), match, compiled_->regex)) return std::nullopt;
  return groups_of(match);
}

bool Pattern::found_in(std::string_view text) const {
  return std::regex_search(text.begin(), text.end(), compiled_->regex);
}

std::vector<MatchGroups> Pattern::search_all(std::string_view text) const {
  std::vector<MatchGroups> all;
  using Iterator = std::regex_iterator<std::string_view::const_iterator>;
  for (Iterator it(text.begin(), text.end(), compiled_->regex), end; it != end; ++it) all.push_back(groups_of(*it));
  return all;
}

std::string Pattern::replace(std::string_view text, const std::string& format) const {
  std::string replaced;
  std::regex_replace(std::back_inserter(replaced), text.begin(), text.end(), compiled_->regex, format);
  return replaced;
}

}  // namespace repro_audit
