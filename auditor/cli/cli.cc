#include "cli/cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/option_checks.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "common/user_error.h"
#include "common/version.h"
#include "report/escape.h"
#include "worker/entry_points.h"

namespace repro_audit {
namespace {

// A command that failed after a stop signal (cli/interruption.h) asked it to stop was interrupted (an output
// FIFO whose reader never came, a write the signal cut short): 130, as every interruption is.
int interrupted_or(int code) {
  if (!stop_requested()) return code;
  print_message("interrupted");
  return 130;
}

}  // namespace

int run_cli(int argc, char** argv) {
  // A write to a worker that died, or to a closed pipe, fails with EPIPE and is handled where it
  // happens (the worker's failure; a lost standard output): it never ends the audit by signal.
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"repro-audit: which PyTorch ops give different bits from run to run, under which settings"};
  app.set_version_flag("--version", kToolVersion);
  app.require_subcommand(1);
  using Adder = Command (*)(CLI::App&);
  const Adder adders[] = {add_run_command,        add_model_command,         add_python_command,
                          add_list_command,       add_env_command,           add_selftest_command,
                          add_show_command,       add_baseline_command,      add_compare_command,
                          add_gate_command,       add_explain_command,       add_merge_command,
                          add_fleet_command,      add_repro_command,         add_worker_command,
                          add_rank_command,       add_export_inputs_command, add_catalogue_source_command,
                          add_fork_client_command};
  std::vector<Command> commands;
  for (const auto add : adders) commands.push_back(add(app));
  // CLI11 takes an unknown word for a missing subcommand; say which word, and what the commands are.
  const auto all = app.get_subcommands([](CLI::App*) { return true; });
  if (argc >= 2 && argv[1][0] != '-' &&
      std::none_of(all.begin(), all.end(), [&](const CLI::App* command) { return command->check_name(argv[1]); })) {
    std::vector<std::string> names;
    for (const auto* command : all)
      if (!command->get_group().empty()) names.push_back(command->get_name());
    std::cerr << fmt::format("repro-audit: unknown command '{}'; valid commands: {}\n", terminal_text(argv[1]),
                             fmt::join(names, ", "));
    return 2;
  }
  // CLI11's messages quote the arguments as given: they go out through print_message like every other.
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    auto message = CLI::FailureMessage::simple(failed, error);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    print_message(message);
    return std::string();
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  if (const auto problem = empty_option_problem(app); !problem.empty()) {
    print_message("repro-audit: " + problem);
    return 2;
  }
  // The front end hands a command that needs libtorch to repro-audit-torch before it does anything.
  if (!torch_side_linked())
    for (const auto& command : commands)
      if (command.parser->parsed() && (!command.needs_torch || command.needs_torch()))
        return start_torch_side(argv, command.cpu_side_may_run);
  // The worker speaks JSON to its supervisor: its output is never rewritten for a terminal.
  std::optional<AsciiTerminal> ascii;
  if (!utf8_locale() && !app.got_subcommand("worker")) ascii.emplace();
  try {
    for (const auto& command : commands) {
      if (!command.parser->parsed()) continue;
      const int code = command.action();
      if (const auto failure = standard_output_failure(); !failure.empty()) {
        std::cerr << "repro-audit: cannot write to standard output: " << failure << "\n";
        return interrupted_or(2);
      }
      return code == 2 ? interrupted_or(2) : code;
    }
    return 2;
  } catch (const UserError& error) {
    print_message(std::string("repro-audit: ") + error.what());
    return interrupted_or(2);
  } catch (const std::filesystem::filesystem_error& error) {
    // A folder that cannot be made or read is the user's environment to fix, not a bug.
    print_message("repro-audit: " + (error.path1().empty() ? "" : error.path1().string() + ": ") +
                  error.code().message() + " (" + error.what() + ")");
    return 2;
  } catch (const std::exception& error) {
    print_message(std::string("repro-audit: internal error: ") + error.what());
    return 3;
  }
}

}  // namespace repro_audit
