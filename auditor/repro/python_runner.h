#pragma once
// The fixed part of every repro.py: digests, runs, verdict and the comparison with the report.

namespace repro_audit {

extern const char* const kPythonRunner;

// The runner of `py` cells (auditor/python_runner/python_runner.py, embedded by CMake): the worker runs it in
// the user's interpreter, and `repro` writes it beside a py cell's script.
extern const char* const kPyCellRunner;

}  // namespace repro_audit
