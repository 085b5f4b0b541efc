#pragma once
// An invariance probe's cell (batch, layout, split): a run returns a reference and the same result
// computed under perturbations; once the runs agree, each perturbed result is held against the
// reference (`invariant` or `varies`), and a variant whose every cell is invariant earns the level
// beside the portability ladder (report/portability.h).
#include "kinds/probe_cell_kind.h"

namespace repro_audit {

const CellKind& invariance_kind();

}  // namespace repro_audit
