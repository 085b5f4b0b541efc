#pragma once
// A model audit's cell (kinds/model_kind.h): the user's model run on its inputs; with per-op records,
// the runs that record every dispatcher op are followed by runs that do not, timed apart; every output
// that differs from run 0 is measured, and the op where a divergence starts is measured against run 0.
#include "runners/cell_runner.h"

namespace repro_audit {

std::unique_ptr<CellRunner> make_model_runner();

}  // namespace repro_audit
