#pragma once
// What the kinds whose cells are a registered probe's variant share (repeat, invariance, collective):
// what PyTorch documents is the probe's, and `repro` exports its Python form with the inputs its
// prepare made.
#include "kind/cell_kind.h"

namespace repro_audit {

class ProbeCellKind : public CellKind {
 public:
  Documented documented(const Cell& cell, const ProbeInfo* probe) const override;
  std::string repro_skip_reason(const CellReport& cell, const ProbeInfo* probe) const override;
  void write_repro(const Report& report, ReproCell& repro, const nlohmann::json& answer,
                   const std::filesystem::path& folder) const override;
};

}  // namespace repro_audit
