#pragma once
// A report names the code its model and py cells ran: a model file (TorchScript or an AOTInductor
// package, whose shared library runs when it is loaded), a model's inputs file (read by libtorch's
// unpickler), an interpreter, a callable's file and module path. A report may come from anywhere: a
// command that loads or runs a cell's code again (`explain` re-runs cells, `repro` runs a model to
// capture the op its divergence starts at) uses only the files the user names on its command line,
// matched to the report's.
#include <string>
#include <vector>

#include "config/model_spec.h"

namespace repro_audit {

// What a command line names in place of a report's code.
struct CodeNamedByUser {
  std::string command;                   // "explain", "repro": said in the refusals
  bool runs_python = true;               // false: py cells are not run (their script is written), only named
  std::string python;                    // --python, already resolved; "" when not given
  std::vector<std::string> callables;    // --callable MODULE:NAME or FILE.py:NAME
  std::vector<std::string> model_files;  // --model FILE
  std::vector<std::string> input_files;  // --inputs FILE
};

// `models` (a report's, read from `source`), each with a cell among `cell_keys` replaced by what the
// user named: a model file by the --model FILE of the same file name or model name, and its inputs
// file, when it has one, by the --inputs FILE of the same file name; a py model (when
// py cells run) by --python and the --callable of the same NAME, its module path taken from it and no
// compile cache (Inductor loads compiled code from one). Throws UserError when a model with a cell has
// nothing named for it, or something named matches none of the report's.
std::vector<ModelSpec> models_named_by_user(std::vector<ModelSpec> models, const std::vector<std::string>& cell_keys,
                                            const std::string& source, const CodeNamedByUser& named);

}  // namespace repro_audit
