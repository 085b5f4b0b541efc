// The runner of each kind of cell, one row each (worker/cell_runner.h), by the kind's name.
#include <functional>
#include <map>

#include "kinds/cell_kind.h"
#include "worker/cell_runner.h"
#include "worker/collective_cell.h"
#include "worker/invariance_cell.h"
#include "worker/model_cell.h"
#include "worker/repeat_cell.h"

namespace repro_audit {

std::unique_ptr<CellRunner> make_cell_runner(const Cell& cell) {
  static const std::map<std::string, std::function<std::unique_ptr<CellRunner>()>> runners = {
      {"repeat", make_repeat_runner},
      {"invariance", make_invariance_runner},
      {"model", make_model_runner},
      {"collective", make_collective_runner},
      // py cells run in the user's interpreter (worker_main hands their batch to worker/python_runner.py);
      // the model runner only answers `repro`'s export for them: their callable makes its own inputs.
      {"py", make_model_runner},
  };
  const auto* name = kind_of(cell).name();
  const auto it = runners.find(name);
  if (it == runners.end()) throw std::logic_error(std::string("no runner for cells of kind ") + name);
  return it->second();
}

}  // namespace repro_audit
