#pragma once
// The worker process's entry points: the internal subcommands `repro-audit worker`, `rank` and
// `export-inputs`. Each reads its request on stdin and returns the process's exit code.
namespace repro_audit {

// Whether this program holds the torch side: true with these entry points (worker_main.cc), false in
// the front end, which has none of them (cli/torch_side.h).
bool torch_side_linked();

// `repro-audit worker`: request on stdin, events on stdout (worker/worker.h).
int worker_main();

// `repro-audit rank`: one of the other ranks of a collective cell (runners/collective_cell.h).
int rank_main();

// `repro-audit export-inputs`: makes the inputs of cells, as their probes make them, and saves the
// tensors each probe named (ProbeContext::input) as DIR/inputs.pt (runners/input_export.h). Started by
// `repro` with the cells' process settings in its environment (ATEN_CPU_CAPABILITY changes ATen's
// random kernels, so it can change the inputs).
// A directory given as "" saves nothing: the answer's digests and descriptions only.
//   stdin:  {"request": WorkerRequest, "directories": [one per cell]}
//   stdout: one line per cell {"key", "input_digest", "inputs": [{"name","dtype","sizes"}], "error"}
int export_inputs_main();

}  // namespace repro_audit
