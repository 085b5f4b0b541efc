#pragma once
// A repeat-and-digest probe's cell: the op run again and again, every output digested; the rules of
// the shared pipeline, with nothing added.
#include "kinds/probe_cell_kind.h"

namespace repro_audit {

const CellKind& repeat_kind();

}  // namespace repro_audit
