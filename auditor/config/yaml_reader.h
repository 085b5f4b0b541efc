#pragma once
// What every YAML loader here shares: errors that name the file, line and column.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>

#include "config/user_error.h"

namespace repro_audit {

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  // Parses `text`; a syntax error becomes a UserError at its position.
  YAML::Node load(const std::string& text) const {
    try {
      return YAML::Load(text);
    } catch (const YAML::Exception& error) {
      throw UserError(source_, std::max(error.mark.line, 0) + 1, std::max(error.mark.column, 0) + 1, error.msg);
    }
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    const auto mark = node.Mark();
    throw UserError(source_, std::max(mark.line, 0) + 1, std::max(mark.column, 0) + 1, message);
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a single value");
    return node.Scalar();
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

}  // namespace repro_audit
