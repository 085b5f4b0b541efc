#pragma once
// JUnit XML, the subset that GitLab, Jenkins and GitHub test reporters read: testsuites > testsuite
// (one per probe) > testcase (one per cell) with an optional failure or skipped element.
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

struct JUnitCase {
  std::string suite;  // the probe
  std::string name;   // the cell key
  double seconds = 0;
  std::optional<std::string> failure_message;  // a <failure> with this message, `failure_type` and `text`
  std::string failure_type;
  std::string text;                            // failure body, or <system-out> for passing cases
  std::optional<std::string> skipped_message;  // a <skipped>
};

// Suites in order of first appearance; every string escaped.
std::string junit_document(const std::string& name, const std::vector<JUnitCase>& cases);

}  // namespace repro_audit
