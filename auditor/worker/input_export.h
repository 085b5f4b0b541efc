#pragma once
// `repro-audit export-inputs` (internal): makes the inputs of cells, as their probes make them, and
// saves the tensors each probe named (ProbeContext::input) as DIR/inputs.pt, which Python's torch.load
// reads. Started by `repro` with the cells' process settings in its environment (ATEN_CPU_CAPABILITY
// changes ATen's random kernels, so it can change the inputs).
//   stdin:  {"request": WorkerRequest, "directories": [one per cell]}
//   stdout: one line per cell {"key", "input_digest", "inputs": [{"name","dtype","sizes"}], "error"}
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "config/input_scheme.h"
#include "plan/plan.h"

namespace repro_audit {

int export_inputs_main();

// One cell's answer, by its kind's runner (worker/cell_runner.h): a probe's inputs as its prepare
// makes them; a model's as the worker made or read them and, with `origin_start` >= 0, the arguments
// of the op where its divergence starts, from one run like the audit's first.
nlohmann::json export_probe_cell(const Cell& cell, InputScheme scheme, const std::string& directory);
nlohmann::json export_model_cell(const Cell& cell, InputScheme scheme, const std::string& directory,
                                 std::int64_t origin_start);

}  // namespace repro_audit
