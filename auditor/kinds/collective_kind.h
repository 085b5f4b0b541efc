#pragma once
// A collective cell: a probe run by `ranks` cooperating processes (runners/collective_cell.h). Its runs
// are judged as a repeat cell's (every rank's bits go into each run's digest: one output per rank);
// the kind adds whether the ranks hold the same bits, what 2 ranks cannot show, and a level beside the
// ladder: world-size-invariant when every rank count measured gives the same result.
#include "kinds/probe_cell_kind.h"

namespace repro_audit {

const CellKind& collective_kind();

}  // namespace repro_audit
