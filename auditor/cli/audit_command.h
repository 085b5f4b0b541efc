#pragma once
// What `run` and `model` share: the audit options, the config they make, and running the audit to
// its outputs and exit code.
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_options.h"
#include "config/config.h"
#include "repro/python_check.h"

namespace repro_audit {

struct RunArguments {
  std::string command = "run";  // run | model: for the resume hint
  std::string config_path;
  std::vector<std::string> probes;
  std::string kind;
  std::vector<std::string> profiles;
  std::vector<std::string> axes;
  std::optional<int> repeats;
  std::optional<double> detect;  // --detect: repeats chosen to catch this per-run divergence rate
  std::optional<int> processes;
  std::string device;
  std::string matrix;
  std::string fail_on;
  OutputArguments outputs;
  std::string save_baseline;
  std::string journal;
  std::string resume;
  bool no_cost = false;
  bool quiet = false;                // no progress and no matrix: the summary only
  std::string budget;                // --budget: "2m", "90s", "1h", "120" (seconds)
  std::optional<int> jobs;           // --jobs: workers side by side after the first process (default: by cores)
  std::optional<int> timing_rounds;  // --timing-rounds (timing/timing.h)
  std::string shard;                 // K/N
  std::optional<int> shards;
  std::string shard_from = "scheduler";
  std::string timings;  // a report whose timings balance the shards
};

// --profile, --axis, --matrix, --repeats, --processes, --device, --fail-on, the outputs,
// --save-baseline, --no-cost, --budget, --jobs, --timing-rounds, --journal, --resume, --shard, --shards,
// --shard-from, --timings.
void add_audit_options(CLI::App* command, RunArguments& arguments);

// The config from a file (or a journal, resuming) with the command line's overrides, validated.
Config make_config(const RunArguments& arguments, const Catalogue& catalogue);

// A `model` or `py` config's last step: any failing cell fails the audit unless --fail-on says otherwise,
// and its models are checked as a catalogue would hold them (a UserError naming what is wrong).
void finish_model_config(const RunArguments& arguments, Config& config);

// The setup of the config's py models, checked before any cell's result is kept: each interpreter
// (`python` from the command line, else the model's `python:` in `config_path`, else the one next to
// libtorch) found by common/program_path.h's rule and asked to import torch and xxhash; `compile_cache`
// a folder it can write. Throws UserError naming the option and the cause. With `started`, the
// interpreters' answers are left to come in there (run_audit_command awaits them) while the audit starts.
void check_python_setup(Config& config, const std::string& python, const std::string& compile_cache,
                        const std::string& config_path, PythonChecks* started = nullptr);

// Runs the audit, prints the matrix, writes the outputs; returns the exit code. `checks`: interpreter
// checks still running, awaited before the first result is kept (a refusal exits 2, nothing written).
int run_audit_command(const RunArguments& arguments, const Catalogue& catalogue, const Config& config,
                      PythonChecks* checks = nullptr);

}  // namespace repro_audit
