#include "runners/repeat_cell.h"

#include <algorithm>
#include <stdexcept>

#include "common/phase_log.h"
#include "probe/sensitivity.h"
#include "runners/input_export.h"

namespace repro_audit {

std::pair<const ProbeDefinition*, const VariantInfo*> cell_probe(const Cell& cell, const at::Device& device) {
  const auto* probe = find_registered_probe(cell.probe);
  if (!probe) throw std::runtime_error("this worker has no probe '" + cell.probe + "'");
  const auto* variant = probe->info.find_variant(cell.variant);
  if (!variant) throw std::runtime_error("probe '" + cell.probe + "' has no variant '" + cell.variant + "'");
  const auto kind = device.is_cuda() ? "cuda" : "cpu";
  if (std::find(variant->devices.begin(), variant->devices.end(), kind) == variant->devices.end())
    throw Unsupported(variant->unsupported_reason.empty() ? std::string("no implementation on ") + kind
                                                          : variant->unsupported_reason);
  return {probe, variant};
}

void measure_first_sensitivity(const ProbeDefinition& probe, const VariantInfo& variant, const CellSetup& setup,
                               ProcessObservation& observation) {
  if (!setup.measure_sensitivity || !probe.info.accumulation.checked()) return;
  std::optional<std::pair<std::optional<Sensitivity>, std::string>> measured;
  if (setup.inputs && setup.inputs->sensitivity) measured = setup.inputs->sensitivity;
  if (!measured) {
    const PhaseScope phase(Phase::sensitivity);
    try {
      measured.emplace(measure_sensitivity(probe, variant, setup.seed, setup.scheme), "");
    } catch (const std::exception& error) {
      measured.emplace(std::nullopt, error.what());
    }
    if (setup.inputs) setup.inputs->sensitivity = measured;
  }
  observation.sensitivity = measured->first;
  if (!measured->second.empty())
    observation.warnings.push_back("the sensitivity check could not run: " + measured->second);
}

RunFunction ProbeRunner::prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) {
  const auto [probe, variant] = cell_probe(cell, setup.device);
  ProbeContext context(setup.device, setup.seed, *variant, setup.inputs, setup.scheme);
  auto run = probe->prepare(context);
  observation.input_digest = context.input_digest();
  measure_first_sensitivity(*probe, *variant, setup, observation);
  return run;
}

nlohmann::json ProbeRunner::export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                                          std::int64_t) const {
  return export_probe_cell(cell, scheme, directory);
}

std::unique_ptr<CellRunner> make_repeat_runner() { return std::make_unique<ProbeRunner>(); }

}  // namespace repro_audit
