#pragma once
// The pipe between supervisor and worker: the batch goes to the worker as one JSON line on stdin;
// the worker answers with one JSON line per event on stdout:
//   {"event":"environment","environment":{...}}   its fingerprint, first
//   {"event":"start","key":K}                      a cell starts (its time limit starts too)
//   {"event":"cell","key":K,"observation":{...}}   the cell finished in this process
//   {"event":"done"}
//   {"event":"environment_failure","message":M}  the machine failed the worker (its temporary folder
//                                                  gone, a full disk): no cell's verdict; the audit ends
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "timing/timing.h"
#include "config/input_scheme.h"
#include "verdict/observation.h"

namespace repro_audit {

struct WorkerRequest {
  std::string device = "cpu";
  int process = 0;
  int repeats = 10;
  int warmup = 1;
  TimingRule timing;  // when a cell's timing-only runs stop
  // 0: determinism runs and the first timing round; 2 and on: that timing round only (a warm-up,
  // then timing-only runs for the round's budget).
  int timing_round = 0;
  FlagSet process_settings;
  std::vector<Cell> cells;
  InputScheme input_scheme = kCurrentInputScheme;  // how the cells' inputs are made from the seed
  // Which process makes the sensitivity checks, and the cells (by key) whose variant's check another
  // batch makes: a property of the inputs alone, measured once per audit (audit/shared_sensitivity.h).
  int sensitivity_process = 0;
  std::vector<std::string> sensitivity_elsewhere;
  // Runs (after warm-up) each process gives a cell documented as possibly diverging while its runs
  // agree: the audit's processes together make verdict/verdict.h's kQuietRuns. 0: no more than `repeats`.
  int quiet_runs = 0;
};

nlohmann::json request_to_json(const WorkerRequest& request);
// Throws nlohmann::json::exception when the JSON is not a request.
WorkerRequest request_from_json(const nlohmann::json& json);

struct WorkerEvent {
  // loaded: a py cells' interpreter has imported torch (a C++ worker says its environment instead).
  // imports: a py worker's cells imported these (of the modules a fork server may import ahead:
  // supervisor/process_launcher.h), said before done; and which of them its fork server imported at its
  // word, beside its own import (`preloaded`).
  enum class Kind { loaded, environment, start, cell, done, environment_failure, imports };
  Kind kind = Kind::done;
  std::string key;                     // start, cell
  ProcessObservation observation;      // cell
  nlohmann::json environment;          // environment
  std::string message;                 // environment_failure; a cell whose observation could not be read: why
  std::vector<std::string> modules;    // imports
  std::vector<std::string> preloaded;  // imports
};

// The environment variable naming the interpreter of a worker's py cells (supervisor/batch_runner.cc
// sets it for a batch of them and removes it for any other): the launcher starts that interpreter as
// the worker (supervisor/worker_launcher.h, InterpreterStart).
inline constexpr const char* kWorkerPython = "REPRO_AUDIT_WORKER_PYTHON";
// And the Inductor cache every process of the batch's py cells shares (--compile-cache), which the
// runner must set before it imports torch._dynamo; unset: each compiles afresh.
inline constexpr const char* kWorkerCompileCache = "REPRO_AUDIT_COMPILE_CACHE";
// "1" where a cell of the batch compiles (its `compile` setting is a mode): the runner imports Dynamo while
// it loads, beside the workers started ahead; unset: it never imports it unless a callable does (a second
// of CPU a worker, mostly torch._inductor's config, which torch.use_deterministic_algorithms imports).
inline constexpr const char* kWorkerCompiles = "REPRO_AUDIT_WORKER_COMPILES";
// "1" in the environment of a later timing round's worker whose cells a process forked from a fork server
// may run (py cells on the CPU that do not compile; supervisor/process_launcher.h). The launcher reads it
// and removes it: no process sees it.
inline constexpr const char* kWorkerForkRound = "REPRO_AUDIT_FORK_ROUND";
// The socket of the fork server that will fork the later timing rounds of a first-round py worker's batch
// (the launcher sets it where one was started ahead; python_runner.py takes it out of the environment):
// when a cell starts importing a module that server imports before forking, the worker asks the server
// to import it now, beside its own import, and waits for its answer before any timed run.
inline constexpr const char* kWorkerForkServer = "REPRO_AUDIT_FORK_SERVER";
// The socket a fork server listens on, in its own folder (its TMPDIR; python_runner.py, serve_forks).
inline constexpr const char* kForkSocketName = "fork.sock";
// "1" in a fork server's environment (a worker started to fork the later rounds' processes); a round's
// worker that asks it for one has the server's socket in kForkClient (supervisor/process_launcher.h).
inline constexpr const char* kForkServe = "REPRO_AUDIT_FORK_SERVE";
inline constexpr const char* kForkClient = "REPRO_AUDIT_FORK_CLIENT";

nlohmann::json environment_event(const nlohmann::json& environment);
nlohmann::json start_event(const std::string& key);
nlohmann::json cell_event(const std::string& key, const ProcessObservation& observation);
nlohmann::json done_event();
nlohmann::json environment_failure_event(const std::string& message);

// nullopt for a line that is not a well-formed event (e.g. a library printing to stdout): the
// supervisor ignores it, and a cell whose result never arrives is blamed when the worker ends. A cell
// event whose key reads but whose observation does not is a cell event with `message` saying why: the
// cell gets that failure, not the blame for whatever came after it.
std::optional<WorkerEvent> parse_event(const std::string& line);

}  // namespace repro_audit
