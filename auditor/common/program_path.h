#pragma once
// One rule for every option that names a program to run (`--python`): a word without a slash is
// looked up on PATH, as execvp and a shell do, and a word with a slash is a path. The current
// folder is searched only when PATH names it ("." or a path to it): an empty PATH entry, which
// execvp takes for the current folder, is skipped, so that `python3` never runs a program planted
// where the tool happens to be started.
#include <string>

namespace repro_audit {

struct ProgramLookup {
  std::string path;     // absolute; "" when the word names no program that can run
  std::string problem;  // why not: "no such file", "is a folder, not a program", ...; "" when found
};

// Looks `word` up against `search_path` (a PATH value: folders separated by ':'). The program must
// be an executable regular file; folders and files without the execute bit are passed over on PATH.
ProgramLookup find_program(const std::string& word, const std::string& search_path);

// The program `word` names, as `option` gave it, looked up on this process's PATH; throws UserError
// "OPTION WORD: why" when there is none.
std::string program_path(const std::string& option, const std::string& word);

}  // namespace repro_audit
