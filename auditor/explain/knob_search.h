#pragma once
// The search's stages, each a set of cells run here within the command's time limit, and the stages
// that try knobs on the changed cells: the knobs the sides point at first, then single knobs by rank,
// then pairs.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare/baseline.h"
#include "explain/explain.h"

namespace repro_audit {

// The cell with the knobs' settings: its key made again, its label the knobs.
Cell with_knobs(const Cell& cell, const std::vector<Knob>& knobs);

// The audit that shows a cell's bits under its settings: every setting off its default as an axis.
std::string audit_command(const Cell& cell, const std::string& executable);

// What the search has run so far, against the command's time limit: each stage of cells recorded in the
// explanation with its time.
struct Search {
  const CellRunner& run;
  const ExplainOptions& options;
  std::function<double()> clock;
  double started = 0;
  Explanation& explanation;

  double elapsed() const { return clock() - started; }

  // Runs the cells (deduplicated by key) and returns their snapshot; records the stage.
  Snapshot run_stage(const std::string& name, const std::vector<Cell>& cells);

  // How many more cells fit in the time limit, by the last stage's pace.
  std::size_t cells_left() const;

  double seconds_per_cell = 1;
};

// The stages of the search: the knobs the sides point at (the other side's variables, the settings
// the changed kernels' libraries key on), then every other single knob, then pairs; each stage only
// for the cells no earlier stage explained, while the time limit allows.
void search_knobs(Search& search, const std::vector<CellExplanation*>& open, const std::map<std::string, Cell>& cells,
                  const Snapshot& before, const Snapshot& after, const ExplainOptions& options);

}  // namespace repro_audit
