#include "audit/shared_sensitivity.h"

#include <map>

namespace repro_audit {
namespace {

// What the check's inputs are made from: the probe's variant and the seed (the input scheme is the audit's).
std::string inputs_of(const Cell& cell) {
  const auto seed = cell.settings.find("seed");
  return cell.probe + "/" + cell.variant + " seed " + (seed == cell.settings.end() ? "" : seed->second);
}

}  // namespace

std::set<std::string> sensitivity_measured_elsewhere(const std::vector<Batch>& batches) {
  std::map<std::string, std::size_t> measuring_batch;
  std::set<std::string> elsewhere;
  for (std::size_t b = 0; b < batches.size(); ++b)
    for (const auto& cell : batches[b].cells)
      if (measuring_batch.emplace(inputs_of(cell), b).first->second != b) elsewhere.insert(cell.key);
  return elsewhere;
}

void share_sensitivity(const std::vector<Cell>& cells, Observations& observations) {
  const auto first_process = [&](const Cell& cell) -> ProcessObservation* {
    const auto it = observations.find(cell.key);
    if (it == observations.end()) return nullptr;
    for (auto& observation : it->second)
      if (observation.process == 0) return &observation;
    return nullptr;
  };
  std::map<std::string, Sensitivity> measured;
  for (const auto& cell : cells)
    if (const auto* observation = first_process(cell); observation && observation->sensitivity)
      measured.emplace(inputs_of(cell), *observation->sensitivity);
  for (const auto& cell : cells) {
    auto* observation = first_process(cell);
    if (!observation || observation->sensitivity || observation->status != ObservationStatus::ok) continue;
    if (const auto it = measured.find(inputs_of(cell)); it != measured.end()) observation->sensitivity = it->second;
  }
}

}  // namespace repro_audit
