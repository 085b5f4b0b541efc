#pragma once
// An invariance probe's cell (kinds/invariance_kind.h): a probe whose run returns its reference first,
// then the same result under each perturbation; the first run's perturbed results that differ from
// the reference are measured against it.
#include "runners/cell_runner.h"

namespace repro_audit {

std::unique_ptr<CellRunner> make_invariance_runner();

}  // namespace repro_audit
