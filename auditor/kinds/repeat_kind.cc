#include "kinds/repeat_kind.h"

namespace repro_audit {
namespace {

class RepeatKind : public CellKind {
 public:
  const char* name() const override { return "repeat"; }
  bool claims(const Cell&) const override { return true; }
};

}  // namespace

const CellKind& repeat_kind() {
  static const RepeatKind kind;
  return kind;
}

}  // namespace repro_audit
