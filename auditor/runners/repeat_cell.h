#pragma once
// A registered probe's cell, run again and again (kinds/repeat_kind.h): its variant's inputs made by
// the probe's prepare with the context, nothing measured besides the shared digests.
#include "runners/cell_runner.h"

namespace repro_audit {

class ProbeRunner : public CellRunner {
 public:
  RunFunction prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) override;
  nlohmann::json export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                               std::int64_t origin_start) const override;
};

std::unique_ptr<CellRunner> make_repeat_runner();

// The cell's registered probe and variant; throws Unsupported when the variant has no implementation
// for the device, std::runtime_error when this worker lacks either.
std::pair<const ProbeDefinition*, const VariantInfo*> cell_probe(const Cell& cell, const at::Device& device);
// The first process's sensitivity check (probe/sensitivity.h), once per variant in a worker (the
// setup's input cache keeps it), into the observation; a check that cannot run is a warning.
void measure_first_sensitivity(const ProbeDefinition& probe, const VariantInfo& variant, const CellSetup& setup,
                               ProcessObservation& observation);

}  // namespace repro_audit
