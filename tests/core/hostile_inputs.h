#pragma once
// Hostile inputs shared by the loader tests: each once cost gigabytes, minutes or the stack.
#include <string>

namespace repro_audit::testing {

// Ten levels of ten aliases each: 10^10 nodes in under 400 bytes (a "billion laughs"). Each line is
// one key of a map, indented by `indent`.
inline std::string alias_bomb(const std::string& indent) {
  std::string bomb = indent + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 10; ++level) {
    bomb += indent + "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *a" : "*a") + std::to_string(level - 1);
    bomb += "]\n";
  }
  return bomb;
}

// A value inside `levels` nested flow lists: YAML and JSON alike.
inline std::string nested_lists(int levels) { return std::string(levels, '[') + "1" + std::string(levels, ']'); }

}  // namespace repro_audit::testing
