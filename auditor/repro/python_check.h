#pragma once
// Before `selftest --python PATH` spends minutes on an audit and a script per probe: can PATH start,
// import torch and answer? Each way it cannot is one clear sentence. The parity run shares it to say
// why its scripts stopped answering.
#include <chrono>
#include <string>

namespace repro_audit {

struct PythonCheck {
  std::string python;          // the interpreter to run: the path given, or a bare name found on PATH
  std::string problem;         // "" when the interpreter answered
  std::string torch_version;   // its torch.__version__
  std::string python_version;  // its sys.version, first word
};

// Runs `python -c` with `import torch` (what every repro.py does first) and waits up to `time_limit`
// for its one-line answer; a process that does not answer by then is stopped.
PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit);

}  // namespace repro_audit
