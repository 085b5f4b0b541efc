#pragma once
// Expands a config into cells: probes x variants x flag sets, collapsed for the device.
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "config/config.h"
#include "config/model_spec.h"
#include "config/settings.h"
#include "plan/cell_key.h"

namespace repro_audit {

struct FlagSetColumn {
  std::string label;  // "strict threads=2"
  FlagSet flags;
};

struct Cell {
  std::string key;  // cell_key(): probe/variant@device|non-default-setting=value,...
  std::string probe;
  std::string variant;
  std::string device;
  std::string label;  // the flag set's column label
  FlagSet settings;
  std::string unsupported_reason;            // set when the variant has no implementation for the device
  double timeout_seconds = 60;               // for all runs of the cell in one process
  Invariance invariance = Invariance::none;  // what an invariance probe's cell perturbs
  std::optional<ModelSpec> model;            // a model cell's model (its probe is "model.<name>")
  // Its share of the audit's --budget, per process: its runs stop once it is spent (after at least
  // kMinimumRepeats); 0 for no budget.
  double budget_seconds = 0;
};

// Under --budget a cell still runs at least this many repeats after warm-up in each process.
inline constexpr int kMinimumRepeats = 3;

struct Plan {
  std::string device;
  std::vector<FlagSetColumn> columns;
  std::vector<Cell> cells;
};

// A group of cells that share the process-level settings, run by one worker per process repeat.
struct Batch {
  FlagSet process_settings;
  std::vector<Cell> cells;
};

// `device` is concrete here ("cpu", "cuda:0"): the caller resolves "auto".
// Collective probes (ProbeInfo::collective) take the flag sets whose `ranks` is 2 or more, every other
// probe those where it is 1; when no flag set sets ranks, each gains kDefaultRanks for the collectives
// (labelled "<flag set> ranks=W"). Throws UserError when a probe is left without a flag set.
Plan make_plan(const Config& config, const Catalogue& catalogue, const std::string& device);

// The rank counts a collective probe runs with unless the flag sets say: 2 cannot show a reordering
// (a + b is b + a), 3 and 4 can.
inline constexpr int kDefaultRanks[] = {2, 3, 4};

// Cells that need a worker, grouped by process-level settings; unsupported cells are left out.
std::vector<Batch> make_batches(const std::vector<Cell>& cells);

}  // namespace repro_audit
