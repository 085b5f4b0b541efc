// The runner of each kind of cell, one row each (runners/cell_runner.h), by the kind's name.
#include <functional>
#include <map>

#include "kind/cell_kind.h"
#include "runners/cell_runner.h"
#include "runners/collective_cell.h"
#include "runners/invariance_cell.h"
#include "runners/model_cell.h"
#include "runners/repeat_cell.h"

namespace repro_audit {

std::unique_ptr<CellRunner> make_cell_runner(const Cell& cell) {
  static const std::map<std::string, std::function<std::unique_ptr<CellRunner>()>> runners = {
      {"repeat", make_repeat_runner},
      {"invariance", make_invariance_runner},
      {"model", make_model_runner},
      {"collective", make_collective_runner},
      // py cells run in the user's interpreter (worker_main hands their batch to python_runner/python_runner.py);
      // the model runner only answers `repro`'s export for them: their callable makes its own inputs.
      {"py", make_model_runner},
  };
  const auto* name = kind_of(cell).name();
  const auto it = runners.find(name);
  if (it == runners.end()) throw std::logic_error(std::string("no runner for cells of kind ") + name);
  return it->second();
}

}  // namespace repro_audit
