#include "report/same_kernel_costs.h"

#include <map>
#include <set>
#include <tuple>

namespace repro_audit {
namespace {

// Every launch the cell's processes made: the kernel's name with its grid and block (an H200 ran the memory-
// efficient attention backward under the same name on one block per row under strict, 16 under warn_only).
using Launch = std::tuple<std::string, std::string, std::string>;
std::set<Launch> launches(const CellReport& cell) {
  std::set<Launch> found;
  for (const auto& observation : cell.observations)
    for (const auto& [digest, kernels] : observation.kernel_sequences)
      for (const auto& kernel : kernels) found.insert({kernel.name, kernel.grid, kernel.block});
  return found;
}

std::string setting(const Cell& cell, const std::string& name) {
  const auto found = cell.settings.find(name);
  return found == cell.settings.end() ? "" : found->second;
}

}  // namespace

std::vector<SameKernelPair> same_kernel_pairs(const Report& report) {
  using Group = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Group, std::vector<const CellReport*>> groups;
  for (const auto& cell : report.cells)
    if (cell.verdict.kind == VerdictKind::deterministic && cell.cost)
      groups[{cell.cell.probe, cell.cell.variant, cell.cell.device, setting(cell.cell, "threads")}].push_back(&cell);
  std::vector<SameKernelPair> pairs;
  for (const auto& [group, cells] : groups) {
    std::vector<std::set<Launch>> launched;
    for (const auto* cell : cells) launched.push_back(launches(*cell));
    for (std::size_t i = 0; i < cells.size(); ++i)
      for (std::size_t j = i + 1; j < cells.size(); ++j)
        if (!launched[i].empty() && launched[i] == launched[j] && cells[i]->cell.settings != cells[j]->cell.settings)
          pairs.push_back({cells[i]->cell.key, cells[j]->cell.key, *cells[i]->cost, *cells[j]->cost});
  }
  return pairs;
}

}  // namespace repro_audit
