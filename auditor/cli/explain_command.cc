// `repro-audit explain BEFORE [AFTER]`: why did the bits of these cells change?
#include <unistd.h>

#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "audit/audit.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "cli/output_options.h"
#include "compare/baseline.h"
#include "common/user_error.h"
#include "explain/explanation_printers.h"
#include "explain/py_callables.h"
#include "repro/python_check.h"
#include "report/escape.h"
#include "worker/environment.h"
#include "worker/probe_catalogue.h"

namespace repro_audit {
namespace {

struct ExplainArguments {
  std::string before;
  std::string after;
  double time_limit = 600;
  int repeats = 2;
  std::string python;
  std::vector<std::string> callables;
  OutputArguments outputs;
};

struct Interrupted {};

// Audits exactly `cells` here: one process each, a warm-up and `repeats` runs (a digest, not a timing),
// their inputs made with `scheme`.
Report run_here(const std::vector<Cell>& cells, int repeats, InputScheme scheme) {
  Config config;
  config.input_scheme = scheme;
  config.device = cells.empty() ? "cpu" : cells.front().device;
  config.repeats = repeats;
  config.warmup = 1;
  config.processes = 1;
  AuditOptions options = local_audit_options();
  options.cells = cells;
  options.timing.rounds = 1;  // digests, not timings
  options.stop_requested = stop_requested;
  options.on_warning = [](const std::string& warning) { std::cerr << "warning: " << warning << "\n"; };
  const auto result = run_audit(config, registered_catalogue(), options);
  if (!result.report.complete) throw Interrupted{};
  remove_finished_journal(result);
  return result.report;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto* explain_command = app.add_subcommand(
      "explain", "Re-run the cells whose bits changed under candidate knobs; name the smallest set that explains it");
  auto arguments = std::make_shared<ExplainArguments>();
  explain_command->add_option("before", arguments->before, "Report or baseline from before")->required();
  explain_command->add_option("after", arguments->after, "Report or baseline from after (default: audit now)");
  explain_command->add_option("--time-limit", arguments->time_limit, "Seconds the search may take (default 600)")
      ->check(CLI::Range(1.0, 86400.0));
  explain_command->add_option("--repeats", arguments->repeats, "Runs per candidate cell after a warm-up (default 2)")
      ->check(CLI::Range(2, 1000));
  explain_command->add_option(
      "--python", arguments->python,
      "The interpreter that re-runs py cells (needs torch and xxhash); a report's is never run");
  explain_command->add_option("--callable", arguments->callables,
                              "FILE.py:NAME or MODULE:NAME: the callable a py cell re-runs (its NAME must be the "
                              "report's); a report's file and module path are never imported (repeatable)");
  for (const auto* format : explanation_formats()) {
    const auto index = static_cast<std::size_t>(format - output_formats().data());
    explain_command->add_option("--" + format->name, arguments->outputs.paths[index], format->help);
  }
  return {
      explain_command, [arguments] {
        check_outputs(arguments->outputs.named(), {{"before", arguments->before}, {"after", arguments->after}});
        const auto python = arguments->python.empty()
                                ? std::string()
                                : checked_python("--python", arguments->python, temporary_folder(), {"xxhash"}).python;
        auto before = load_comparable(arguments->before);
        if (before.cells.empty()) throw UserError(arguments->before + ": has no cells; there is nothing to explain");
        before.models = py_models_named_by_user(before, python, arguments->callables);
        std::optional<Snapshot> after;
        if (!arguments->after.empty()) after = load_comparable(arguments->after);
        ExplainOptions options;
        options.time_limit_seconds = arguments->time_limit;
        options.here = environment_fingerprint();
        options.runnable_capabilities =
            options.here.value("aten_cpu_capabilities", std::vector<std::string>{"default"});
        options.executable = "repro-audit";
        install_stop_handlers();
        const int repeats = arguments->repeats;
        // The snapshots' inputs, made again here: a digest of other inputs reproduces nothing.
        const auto scheme = after ? after->input_scheme : before.input_scheme;
        Explanation explanation;
        try {
          explanation = explain(
              before, after, registered_catalogue(),
              [repeats, scheme](const std::vector<Cell>& cells) { return run_here(cells, repeats, scheme); }, options);
        } catch (const Interrupted&) {
          std::cerr << "interrupted: nothing was explained\n";
          return 130;
        }
        print_explanation(explanation, std::cout);
        std::cout << std::flush;
        const auto failures = write_explanations(arguments->outputs.files(), explanation);
        for (const auto& failure : failures) std::cerr << "repro-audit: " << failure << "\n";
        if (!failures.empty()) return 2;
        // A cell that cannot run here explains nothing: the setup here is the user's to fix.
        for (const auto& cell : explanation.not_run_here)
          std::cerr << "repro-audit: cannot explain " << terminal_message(cell) << "\n";
        if (!explanation.not_run_here.empty()) return 2;
        return explanation_failed(explanation) ? 1 : 0;
      }};
}

}  // namespace repro_audit
