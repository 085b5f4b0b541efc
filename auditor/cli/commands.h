#pragma once
// Each subcommand adds its options to the parser and returns the action to run when chosen.
#include <CLI/CLI.hpp>

#include <functional>

namespace repro_audit {

struct Command {
  CLI::App* parser;
  std::function<int()> action;  // returns the exit code
  // Whether the action, with the options parsed, needs libtorch (cli/torch_side.h); unset: it does.
  // Only a command that reads reports and baselines alone says no: it runs in the front end.
  std::function<bool()> needs_torch = {};
  // Whether repro-audit-cpu may run it in repro-audit-torch's place where it can (cli/torch_side.h): the
  // command reads no CUDA fact but the fingerprint's, and loads no model file itself.
  bool cpu_side_may_run = false;
};

Command add_run_command(CLI::App& app);
Command add_model_command(CLI::App& app);
Command add_python_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_env_command(CLI::App& app);
Command add_worker_command(CLI::App& app);
Command add_rank_command(CLI::App& app);
Command add_fork_client_command(CLI::App& app);
Command add_selftest_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_baseline_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_gate_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_fleet_command(CLI::App& app);
Command add_repro_command(CLI::App& app);
Command add_export_inputs_command(CLI::App& app);
Command add_catalogue_source_command(CLI::App& app);

}  // namespace repro_audit
