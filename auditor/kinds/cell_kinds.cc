// The kinds of cell, one row each: the one definition of cell_kinds() (kind/cell_kind.h). An explicit
// table, not self-registration: static registration in a static library is dropped by the linker.
#include "kind/cell_kind.h"
#include "kinds/collective_kind.h"
#include "kinds/invariance_kind.h"
#include "kinds/model_kind.h"
#include "kinds/python_kind.h"
#include "kinds/repeat_kind.h"

namespace repro_audit {

// Asked in this order; the last takes every cell the others leave.
const std::vector<const CellKind*>& cell_kinds() {
  static const std::vector<const CellKind*> kinds = {
      &python_kind(),  // before model: a py cell is a model cell with a callable
      &model_kind(),  &invariance_kind(), &collective_kind(), &repeat_kind(),
  };
  return kinds;
}

}  // namespace repro_audit
