#pragma once
// A `py` cell (`repro-audit py MODULE:CALLABLE`): the user's Python callable, run by the user's
// interpreter through the runner the tool ships (python_runner/python_runner.py), eager or under
// torch.compile. Its observations are a model cell's (outputs, parameters and gradients digested one
// by one, per-op records of eager runs), so its verdict, printer lines and baseline are the model
// kind's; its `repro` is a script that imports the callable by its module path.
#include "kind/cell_kind.h"

namespace repro_audit {

const CellKind& python_kind();

}  // namespace repro_audit
