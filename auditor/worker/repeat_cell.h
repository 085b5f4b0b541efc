#pragma once
// A registered probe's cell, run again and again (kinds/repeat_kind.h): its variant's inputs made by
// the probe's prepare with the context, nothing measured besides the shared digests.
#include "worker/cell_runner.h"

namespace repro_audit {

class ProbeRunner : public CellRunner {
 public:
  RunFunction prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) override;
  nlohmann::json export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                               std::int64_t origin_start) const override;
};

std::unique_ptr<CellRunner> make_repeat_runner();

}  // namespace repro_audit
