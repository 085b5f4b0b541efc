#pragma once
// Output paths are checked before any work starts: an audit must never run for an hour only to find
// it cannot write its report, and no command may overwrite its own input.
#include <string>
#include <vector>

namespace repro_audit {

struct NamedPath {
  std::string option;  // "--json", "-o", "report" (a positional argument)
  std::string path;
};

// Throws UserError naming the option, path and reason when an output's folder is missing or not
// writable, an output is something the writer cannot write (a folder, a socket, a loop of links; see
// common/output_target.h for links, devices and FIFOs), two outputs name one file, or an output names
// an input file. Empty paths are skipped. Nothing is left in an output's folder, whenever it stops.
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace repro_audit
