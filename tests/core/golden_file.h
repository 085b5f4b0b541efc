#pragma once
// Golden files: expected printer output, compared byte for byte. REPRO_AUDIT_UPDATE_GOLDEN=1 (see
// tools/update-golden) writes the actual output instead, for a person to review in the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/atomic_file.h"
#include "test_paths.h"

namespace repro_audit::testing {

// Set by tools/update-golden.
inline bool updating_goldens() {
  const char* update = std::getenv("REPRO_AUDIT_UPDATE_GOLDEN");
  return update && std::string(update) == "1";
}

inline std::string golden_path(const std::string& name) { return std::string(test_paths::kGoldenDir) + "/" + name; }

inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (updating_goldens()) {
    write_file_atomically(path, actual);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing: run tools/update-golden and review the new file";
  std::stringstream expected_stream;
  expected_stream << in.rdbuf();
  const auto expected = expected_stream.str();
  if (expected == actual) return;
  // Name the first differing line: a whole-file diff of an HTML page is unreadable in a test log.
  std::istringstream expected_lines(expected), actual_lines(actual);
  std::string want, got;
  int line = 0;
  while (true) {
    ++line;
    const bool more_want = static_cast<bool>(std::getline(expected_lines, want));
    const bool more_got = static_cast<bool>(std::getline(actual_lines, got));
    if (!more_want && !more_got) break;
    if (want != got || more_want != more_got) break;
  }
  ADD_FAILURE() << path << ":" << line << ": differs from the output (REPRO_AUDIT_UPDATE_GOLDEN=1 rewrites it)\n"
                << "  expected: " << want << "\n  actual:   " << got;
}

}  // namespace repro_audit::testing
