#pragma once
// `repro-audit export-inputs` (internal): makes the inputs of cells, as their probes make them, and
// saves the tensors each probe named (ProbeContext::input) as DIR/inputs.pt, which Python's torch.load
// reads. Started by `repro` with the cells' process settings in its environment (ATEN_CPU_CAPABILITY
// changes ATen's random kernels, so it can change the inputs).
//   stdin:  {"request": WorkerRequest, "directories": [one per cell]}
//   stdout: one line per cell {"key", "input_digest", "inputs": [{"name","dtype","sizes"}], "error"}
namespace repro_audit {

int export_inputs_main();

}  // namespace repro_audit
