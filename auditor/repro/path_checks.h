#pragma once
// path_checks.py: evaluates the probes' PythonPath checks with a given Python torch. Reads
// [{"probe","note","check"}] on stdin; prints [{"holds","detail"}] as one line.

namespace repro_audit {

extern const char* const kPathChecker;

}  // namespace repro_audit
