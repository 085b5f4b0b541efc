#pragma once
// The files a command can write, several at once: one option --<name> FILE per registered output
// format (output/output_format.h), so a new format needs no change here.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/output_paths.h"
#include "output/output_format.h"

namespace repro_audit {

struct OutputArguments {
  // One path per format, aligned with output_formats(); CLI11 writes into these, so the object must
  // not move after add_output_options (the commands hold it in place or behind a shared_ptr).
  std::vector<std::string> paths = std::vector<std::string>(output_formats().size());

  std::vector<OutputFile> files() const {
    std::vector<OutputFile> result;
    for (std::size_t i = 0; i < paths.size(); ++i)
      if (!paths[i].empty()) result.push_back({output_formats()[i].name, paths[i]});
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
  for (std::size_t i = 0; i < output_formats().size(); ++i)
    command->add_option("--" + output_formats()[i].name, outputs.paths[i], output_formats()[i].help);
}

}  // namespace repro_audit
