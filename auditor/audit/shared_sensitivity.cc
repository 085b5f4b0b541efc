#include "audit/shared_sensitivity.h"

#include <algorithm>
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
  const auto measured_in = [&](const Cell& cell) -> const Sensitivity* {
    const auto it = observations.find(cell.key);
    if (it == observations.end()) return nullptr;
    for (const auto& observation : it->second)
      if (observation.sensitivity) return &*observation.sensitivity;
    return nullptr;
  };
  std::map<std::string, Sensitivity> measured;
  for (const auto& cell : cells)
    if (const auto* sensitivity = measured_in(cell)) measured.emplace(inputs_of(cell), *sensitivity);
  for (const auto& cell : cells) {
    const auto it = observations.find(cell.key);
    if (it == observations.end() || it->second.empty() || measured_in(cell)) continue;
    auto& first = *std::min_element(it->second.begin(), it->second.end(),
                                    [](const auto& a, const auto& b) { return a.process < b.process; });
    if (first.status != ObservationStatus::ok) continue;
    if (const auto found = measured.find(inputs_of(cell)); found != measured.end()) first.sensitivity = found->second;
  }
}

}  // namespace repro_audit
