#pragma once
// `py` cells run in the user's Python: a worker whose batch holds them replaces itself with the
// interpreter running the shipped runner (python_runner/python_runner.py), which speaks the same protocol.
#include <nlohmann/json.hpp>
#include <string>

#include "protocol/worker_protocol.h"

namespace repro_audit {

// The interpreter of a batch of py cells; "" when the batch holds no py cell.
std::string python_of_batch(const WorkerRequest& request);

// Replaces this process with `python` running the runner, the event pipe (`events_fd`) on its stdout and
// stdin still the supervisor's pipe: the runner imports torch, says `loaded_line` (the worker's
// environment event), then reads its request. Returns only when the interpreter cannot start, with why.
std::string exec_python_runner(const std::string& python, int events_fd, const std::string& loaded_line);

// The Python next to the libtorch this binary uses (<prefix>/bin/python3 above torch/lib); "" if none.
std::string python_next_to_libtorch();

}  // namespace repro_audit
