#pragma once
// Files the Python next to libtorch makes for the CLI tests: a TorchScript model, a torch.save file.
// Each is an interpreter that imports torch (3-4 s of CPU on a slow host) to write a few kilobytes, so
// what a script made is kept in the test fixture cache (fixture_cache.h), keyed by the script's text and
// the interpreter: the first test of a run makes the file, every later one (in this run or the next)
// copies it. The file is what the same script makes; the tests read it as a user's file either way.
#include <string>

#include "cli_tools.h"
#include "fixture_cache.h"

namespace testing_cli {

// Runs `script` (its text, written to `folder`/`name`) with `python` and the output file as its one
// argument, unless the cache holds what it made; true when `file` is there.
inline bool python_fixture(const fs::path& folder, const std::string& name, const std::string& script,
                           const std::string& python, const std::string& file) {
  const auto source = (folder / name).string();
  std::ofstream(source) << script;
  // The file is quoted: a test may name it with characters a shell would read (never a single quote).
  return repro_audit::testing::make_fixture(source, python + " " + source + " '" + file + "'", file) == 0 &&
         fs::is_regular_file(file);
}

// torch.nn.Linear(8, 4), seeded, scripted and saved: the small model the CLI tests audit and export.
inline const char* const kScriptedLinear =
    "import sys, torch\ntorch.manual_seed(0)\ntorch.jit.script(torch.nn.Linear(8, 4)).save(sys.argv[1])\n";

inline bool scripted_linear(const fs::path& folder, const std::string& python, const std::string& file) {
  return python_fixture(folder, "make_linear.py", kScriptedLinear, python, file);
}

}  // namespace testing_cli
