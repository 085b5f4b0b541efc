#pragma once
// A py cell is the user's code. A report names the interpreter, the file and the module path that
// ran it, but a report may come from anywhere: `explain` runs a py cell again only with the
// interpreter and callable the user names on the command line, checked against the report's.
#include <string>
#include <vector>

#include "compare/baseline.h"

namespace repro_audit {

// The snapshot's models, each py model with a cell in it run by `python` (already resolved) and the
// `callables` given (MODULE:NAME or FILE.py:NAME, matched to the report's by NAME), its module path
// and file taken from the callable given, and no compile cache (Inductor loads compiled code from one).
// Throws UserError when the snapshot holds a py cell and `python` or a matching callable is missing,
// or a callable given matches none of the report's.
std::vector<ModelSpec> py_models_named_by_user(const Snapshot& snapshot, const std::string& python,
                                               const std::vector<std::string>& callables);

}  // namespace repro_audit
