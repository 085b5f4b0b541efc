#pragma once
// Many exported scripts run by one Python: it imports torch once and forks a fresh child for each
// script, which runs it as `python SCRIPT ARGS...` would (as __main__, with that argv and its folder
// first on sys.path). Importing torch costs 1.5-2 s of CPU a process; a parity check runs a hundred
// scripts. Used by repro/parity.cc.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace repro_audit {

// How one script ended: its last stdout line, or why there is none.
struct ScriptRun {
  std::string last_line;
  std::string failure;
  bool timed_out = false;
  bool stopped = false;
};

struct ScriptHostOptions {
  std::string python;
  std::string host_path;  // where the host's own code is written
  std::string temporary_folder;
  std::chrono::seconds script_time_limit{600};
  std::function<bool()> stop_requested;  // polled each second
  // Asked before each script after the first: a reason not to run it and the rest ("" to run it). A
  // script not run gets it as its failure, with `stopped` set.
  std::function<std::string()> not_run_reason;
  // Told the index of a script that did not answer in time, before the rest are given their reason.
  std::function<void(std::size_t)> on_timeout;
};

// Runs each argv (a script and its arguments) in turn in one host, each with the time limit. A script
// that does not answer in time ends the host (its child first): it and the scripts after it are
// reported (timed out, then not run). Never throws.
std::vector<ScriptRun> run_in_host(const std::vector<std::vector<std::string>>& scripts,
                                   const ScriptHostOptions& options);

}  // namespace repro_audit
