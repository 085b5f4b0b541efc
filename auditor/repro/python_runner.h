#pragma once
// The fixed part of every repro.py: digests, runs, verdict and the comparison with the report.

namespace repro_audit {

extern const char* const kPythonRunner;

}  // namespace repro_audit
