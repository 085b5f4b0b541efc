#pragma once
// The report files a command can write, several at once: --json, --junit, --markdown, --html.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/output_paths.h"
#include "report/printers.h"

namespace repro_audit {

struct OutputArguments {
  std::string json, junit, markdown, html;

  std::vector<OutputFile> files() const {
    std::vector<OutputFile> result;
    for (const auto& [format, path] :
         {std::pair{"json", &json}, {"junit", &junit}, {"markdown", &markdown}, {"html", &html}})
      if (!path->empty()) result.push_back({format, *path});
    return result;
  }

  // For the checks before the work: {"--json", path}, ...
  std::vector<NamedPath> named() const {
    std::vector<NamedPath> result;
    for (const auto& file : files()) result.push_back({"--" + file.format, file.path});
    return result;
  }

  // The options again, for a resume command: "--json", path, ...
  std::vector<std::string> words() const {
    std::vector<std::string> result;
    for (const auto& file : files()) {
      result.push_back("--" + file.format);
      result.push_back(file.path);
    }
    return result;
  }
};

inline void add_output_options(CLI::App* command, OutputArguments& outputs) {
  command->add_option("--json", outputs.json, "Write JSON to FILE");
  command->add_option("--junit", outputs.junit, "Write JUnit XML to FILE (a testsuite per probe, a testcase per cell)");
  command->add_option("--markdown", outputs.markdown, "Write Markdown to FILE (fits a GitHub job summary)");
  command->add_option("--html", outputs.html, "Write one self-contained HTML page to FILE");
}

}  // namespace repro_audit
