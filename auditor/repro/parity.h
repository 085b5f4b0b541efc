#pragma once
// Parity: does each probe run the op a Python user runs? Every exported cell's repro.py is run with a given
// Python, and its digests (or, where the probe declares why they cannot match, its verdict) are compared
// with the C++ worker's; the probes' declared Python paths are checked too. `selftest --python` uses it.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "report/report.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {

struct ParityCell {
  std::string key;
  std::string probe;
  // equal: the same digests; verdict: the same verdict (the probe declares its digests differ);
  // mismatch; skipped (no Python form, nothing to compare); not run (an earlier script hung, or a stop
  // was asked for: the detail says which).
  std::string status;
  std::string detail;
};

struct ParityPath {
  std::string probe;
  std::string note;
  bool holds = false;
  bool checked = true;  // false: not run (the scripts' interpreter hung, or a stop was asked for)
  std::string detail;
  bool applies = true;  // false: it fails on a torch older than the notes' (kPythonPathsCheckedWith), not stale
};

struct ParityResult {
  std::string python_torch;  // torch.__version__ of the Python used
  std::vector<ParityCell> cells;
  std::vector<ParityPath> paths;
  bool complete = true;  // false when stop_requested cut the run short
  int failures() const;
  int not_run() const;
};

// The script's --json output against the report's cell.
ParityCell compare_with_script(const CellReport& cell, const ProbeInfo& probe, const std::string& script_output);

struct ParityOptions {
  std::string python;  // the interpreter to run repro.py with
  std::string folder;  // where the exports go
  std::string executable;
  std::string temporary_folder;
  int runs = 2;
  unsigned jobs = 1;  // scripts run at once
  // An invariance cell's verdict and digests are its first run's; its C++ runs show whether they agree.
  int invariance_runs = 1;
  // A script takes seconds (import torch, the op twice); a limit far above that still ends a hang.
  std::chrono::seconds script_time_limit{600};
  std::function<bool()> stop_requested;  // polled each second; scripts not started are then not run
};

// Exports every cell of `report`, runs each script, checks the declared Python paths of its probes. A
// script that cannot start or fails is that cell's mismatch, never an exception; the first script that
// does not answer within the limit stops the run (see parity.cc).
ParityResult run_parity(const Report& report, const Catalogue& catalogue, const ParityOptions& options);

std::string parity_text(const ParityResult& result);

}  // namespace repro_audit
