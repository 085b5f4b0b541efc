#pragma once
// A cell's inputs, made as its probe (or model) makes them and saved as DIR/inputs.pt, which Python's
// torch.load reads: what `repro-audit export-inputs` (worker/entry_points.h) answers per cell.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "config/input_scheme.h"
#include "plan/plan.h"

namespace repro_audit {

// One cell's answer, by its kind's runner (runners/cell_runner.h): a probe's inputs as its prepare
// makes them; a model's as the worker made or read them and, with `origin_start` >= 0, the arguments
// of the op where its divergence starts, from one run like the audit's first.
nlohmann::json export_probe_cell(const Cell& cell, InputScheme scheme, const std::string& directory);
nlohmann::json export_model_cell(const Cell& cell, InputScheme scheme, const std::string& directory,
                                 std::int64_t origin_start);

}  // namespace repro_audit
