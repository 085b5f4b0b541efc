#pragma once
// `repro-audit` is the front end people run; it does not load libtorch. A command that reads only
// reports and baselines (show, baseline, compare, gate --report, merge, fleet) runs in it, in a few
// milliseconds; every other command is handed, whole and unchanged, to repro-audit-torch beside it:
// the same commands linked with libtorch and the probes, which loads libtorch's 3 GB of libraries
// (0.3 s of every command here) and runs the audits.
//
// `run`, `list` and `repro` run in the front end too, with the probe catalogue built into it
// (cli/embedded_catalogue.h), where the machine has no CUDA driver: an audit there can only be of the
// CPU, its workers load libtorch (the first one the whole of it, for the report's CUDA facts: audit/audit.h;
// none, where those facts were kept from an earlier audit: fingerprint/kept_cuda_facts.h),
// and its supervisor need not (`repro`'s inputs are made by repro-audit-cpu's export-inputs, or by
// repro-audit-torch's for a model). Where a driver can be loaded, `auto` means a GPU if libtorch finds one,
// which only libtorch can say: the command is handed over as before.
//
// `py`, `explain` and `selftest` go to repro-audit-cpu instead (libtorch without its CUDA half: about 0.2 s
// of CPU less a command) where no CUDA driver loads and the CUDA facts of repro-audit-torch are kept
// (fingerprint/kept_cuda_facts.h): there libtorch's CUDA half can give nothing but those facts. Their
// reports' environment is the one repro-audit-torch would give (command_fingerprint).
#include <nlohmann/json.hpp>
#include <string>

namespace repro_audit {

// repro-audit-torch beside this program.
std::string torch_side_program();

// The program whose internal commands (worker, export-inputs) load libtorch: this one on the torch side;
// in the front end and in repro-audit-cpu repro-audit-torch beside it, or EnvironmentError when that cannot
// be started.
std::string torch_program();

// Replaces this process with repro-audit-torch, beside this program, with the same arguments: the
// same process, its output and exit code; with repro-audit-cpu where `cpu_side_may_run` and
// it can serve (it is there, no CUDA driver loads, and repro-audit-torch's CUDA facts are kept and still
// hold). Returns only when it cannot start: says why, returns 2.
int start_torch_side(char** argv, bool cpu_side_may_run);

// Whether this program is repro-audit-cpu.
bool running_as_cpu_side();

// This machine's fingerprint as repro-audit-torch says it (worker/environment.h): its own on the torch
// side, where the CUDA facts a driverless machine's libraries give are kept for the next command; in
// repro-audit-cpu its own with those kept facts (asked of repro-audit-torch where they no longer hold);
// in the front end asked of repro-audit-torch.
nlohmann::json command_fingerprint();

// Whether the CUDA driver (libcuda.so.1) can be loaded here: without it the CUDA runtime finds no
// device, and libtorch none (torch.cuda.is_available() is false).
bool cuda_driver_loadable();

// The fingerprint `repro-audit-torch env` prints (worker/environment.h), from that program started for
// it; throws EnvironmentError when it cannot be started or says no fingerprint.
nlohmann::json torch_side_fingerprint();

// The program people run, for the commands a message prints (a resume hint) and a timing round's fork
// client: repro-audit beside this one when this is repro-audit-torch or repro-audit-cpu, else this one.
std::string front_end_executable();

}  // namespace repro_audit
