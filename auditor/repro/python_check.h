#pragma once
// Before `selftest --python PATH` spends minutes on an audit and a script per probe, and before `py`
// or `explain` start a cell: can PATH start, import torch (and what else it needs) and answer? Each way
// it cannot is one clear sentence. The parity run shares it to say why its scripts stopped answering.
#include <chrono>
#include <future>
#include <string>
#include <vector>

namespace repro_audit {

struct PythonCheck {
  std::string python;          // the interpreter to run: the path given, or a bare name found on PATH
  std::string problem;         // "" when the interpreter answered
  std::string torch_version;   // its torch.__version__
  std::string python_version;  // its sys.version, first word
};

// Runs `python -c` with `import torch` (what every repro.py does first) and the other `modules`, and
// waits up to `time_limit` for its one-line answer; a process that does not answer by then is stopped.
// `python` is a path (program_path resolves what a user typed). `find_torch`: torch is only found (its
// version the installed distribution's), for callers whose workers import it themselves.
PythonCheck check_python(const std::string& python, const std::string& temporary_folder,
                         std::chrono::seconds time_limit, const std::vector<std::string>& modules = {},
                         bool find_torch = false);

// The interpreter `option` names by `word` (a bare word on PATH, common/program_path.h), checked as
// check_python does; throws UserError "OPTION WORD: why" when it cannot answer.
PythonCheck checked_python(const std::string& option, const std::string& word, const std::string& temporary_folder,
                           const std::vector<std::string>& modules = {}, bool find_torch = false);

// Checks that run beside whatever the caller starts next, the py workers: each imports torch (a second
// or more of CPU), so the check only finds it (find_torch) and imports the other modules; a torch that
// is found and fails to import fails the first worker, naming it (the machine's failure, exit 2). wait()
// throws the first refusal, as checked_python would.
class PythonChecks {
 public:
  // Finds the interpreter now (a name that is no program throws here) and starts its check; returns it.
  std::string start(const std::string& option, const std::string& word, const std::string& temporary_folder,
                    const std::vector<std::string>& modules = {});
  void wait();
  // As wait(), for the checks that have answered already; returns at once.
  void throw_if_refused();

 private:
  struct Pending {
    std::string option, word;
    std::future<PythonCheck> answer;
  };
  static void settle(Pending& pending);
  std::vector<Pending> pending_;
};

// The time an interpreter has to answer: 120 s, or REPRO_AUDIT_PYTHON_CHECK_SECONDS.
std::chrono::seconds python_check_limit();

// A folder the interpreter will write into (an Inductor cache): made when missing, and a file
// created and removed in it; throws UserError "OPTION PATH: why" when that fails. Returns it absolute.
std::string checked_writable_folder(const std::string& option, const std::string& path);

}  // namespace repro_audit
