#include "cli/cli.h"

#include <iostream>

#include "cli/commands.h"
#include "config/user_error.h"
#include "config/version.h"

namespace repro_audit {

int run_cli(int argc, char** argv) {
  CLI::App app{"repro-audit: which PyTorch ops give different bits from run to run, under which settings"};
  app.set_version_flag("--version", kToolVersion);
  app.require_subcommand(1);
  using Adder = Command (*)(CLI::App&);
  const Adder adders[] = {add_run_command,      add_list_command, add_env_command,
                          add_selftest_command, add_show_command, add_baseline_command,
                          add_compare_command,  add_gate_command, add_worker_command};
  std::vector<Command> commands;
  for (const auto add : adders) commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    for (const auto& command : commands)
      if (command.parser->parsed()) return command.action();
    return 2;
  } catch (const UserError& error) {
    std::cerr << "repro-audit: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "repro-audit: internal error: " << error.what() << "\n";
    return 3;
  }
}

}  // namespace repro_audit
