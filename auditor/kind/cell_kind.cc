// The lookup of a cell's kind.
#include "kind/cell_kind.h"

namespace repro_audit {

const CellKind& kind_of(const Cell& cell) {
  const auto& kinds = cell_kinds();
  for (const auto* kind : kinds)
    if (kind->claims(cell)) return *kind;
  return *kinds.back();
}

}  // namespace repro_audit
