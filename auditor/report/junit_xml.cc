#include "report/junit_xml.h"

#include <fmt/format.h>

#include <map>

#include "report/escape.h"

namespace repro_audit {
namespace {

struct Counts {
  int tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  void add(const JUnitCase& test) {
    ++tests;
    failures += test.failure_message ? 1 : 0;
    skipped += test.skipped_message ? 1 : 0;
    seconds += test.seconds;
  }
  std::string attributes() const {
    return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.6f}\"", tests, failures,
                       skipped, seconds);
  }
};

std::string testcase(const JUnitCase& test) {
  auto xml = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"", xml_escape(test.suite),
                         xml_escape(test.name), test.seconds);
  if (test.failure_message)
    return xml + fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                             xml_escape(*test.failure_message), xml_escape(test.failure_type), xml_escape(test.text));
  if (test.skipped_message)
    return xml +
           fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(*test.skipped_message));
  if (!test.text.empty())
    return xml + fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(test.text));
  return xml + "/>\n";
}

}  // namespace

std::string junit_document(const std::string& name, const std::vector<JUnitCase>& cases) {
  // Each suite's cases gathered once: scanning every case for each suite would be quadratic.
  std::vector<std::string> suites;
  std::map<std::string, Counts> counts;
  std::map<std::string, std::vector<const JUnitCase*>> members;
  Counts total;
  for (const auto& test : cases) {
    if (!counts.count(test.suite)) suites.push_back(test.suite);
    counts[test.suite].add(test);
    members[test.suite].push_back(&test);
    total.add(test);
  }
  auto xml = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" {}>\n", xml_escape(name),
                         total.attributes());
  for (const auto& suite : suites) {
    xml += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape(suite), counts[suite].attributes());
    for (const auto* test : members[suite]) xml += testcase(*test);
    xml += "  </testsuite>\n";
  }
  return xml + "</testsuites>\n";
}

}  // namespace repro_audit
