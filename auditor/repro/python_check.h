#pragma once
// Before `selftest --python PATH` spends minutes on an audit and a script per probe: can PATH start,
// import torch and answer? Each way it cannot is one clear sentence.
#include <chrono>
#include <string>

namespace repro_audit {

struct PythonCheck {
  std::string problem;        // "" when the interpreter answered
  std::string torch_version;  // its torch.__version__
};

PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit);

}  // namespace repro_audit
