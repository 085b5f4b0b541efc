#pragma once
// `py` cells run in the user's Python: their worker is the interpreter running the shipped runner
// (python_runner/python_runner.py), started by the supervisor (supervisor/worker_launcher.h,
// InterpreterStart); it speaks the same protocol as `repro-audit worker`.
#include <map>
#include <string>
#include <vector>

#include "protocol/worker_protocol.h"

namespace repro_audit {

// The interpreter of a batch of py cells; "" when the batch holds no py cell.
std::string python_of_batch(const WorkerRequest& request);

// The command line of a py cells' worker: `python` running the runner from its -c argument (it needs
// no file on disk; its name in tracebacks is its argv[0]), unbuffered (-u): each event reaches the
// supervisor at once. Its stdin is the request, its stdout the event pipe. Throws EnvironmentError for a
// `python` that is no absolute path.
std::vector<std::string> python_runner_command(const std::string& python);

// What the runner takes from its environment, set whatever the user's environment held: the
// word-sums kernel's library beside this program (CUDA builds; the runner digests a CUDA tensor's
// per-op records on the device with it), "" (removed) where there is none.
std::map<std::string, std::string> python_runner_environment();

// The Python next to the libtorch this binary uses (<prefix>/bin/python3 above torch/lib); "" if none.
std::string python_next_to_libtorch();

}  // namespace repro_audit
