#pragma once
// The one bounded path for YAML input (config, gate policy, baseline): exactly one document, no
// duplicate keys, nesting at most kMaxNestingDepth deep, and a budget for what aliases expand to.
// Errors name the file, line and column.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/user_error.h"

namespace repro_audit {

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  // Checks the text, then builds yaml-cpp's tree of it: a null node for a text without a document.
  YAML::Node load(const std::string& text) const;

  // Checks the text as `load` does while sending the events of its document to `handler`, each alias
  // replaced by the events of the node it names. Builds no tree: yaml-cpp's costs about 30 times the
  // text, too much for a large baseline.
  void stream(const std::string& text, YAML::EventHandler& handler) const;

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const { fail(node.Mark(), message); }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " must be a single value");
    return node.Scalar();
  }

  const std::string& source() const { return source_; }

 private:
  void check(const std::string& text, YAML::EventHandler* handler) const;

  std::string source_;
};

}  // namespace repro_audit
