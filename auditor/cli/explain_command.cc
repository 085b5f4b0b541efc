// `repro-audit explain BEFORE [AFTER]`: why did the bits of these cells change?
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "audit/audit.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "cli/output_options.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "common/user_error.h"
#include "compare/baseline.h"
#include "config/models_named_by_user.h"
#include "explain/explanation_printers.h"
#include "probe/probe_catalogue.h"
#include "report/escape.h"
#include "repro/python_check.h"

namespace repro_audit {
namespace {

struct ExplainArguments {
  std::string before;
  std::string after;
  double time_limit = 600;
  int repeats = 2;
  std::string python;
  std::vector<std::string> callables;
  std::vector<std::string> models;
  std::vector<std::string> inputs;
  OutputArguments outputs;
};

struct Interrupted {};

using Clock = std::chrono::steady_clock;

double seconds_of(Clock::time_point time) { return std::chrono::duration<double>(time.time_since_epoch()).count(); }

// Audits exactly `cells` here: one process each, a warm-up and `repeats` runs (a digest, not a timing),
// their inputs made with `scheme`. Past `seconds_left` the audit stops as Ctrl-C stops it (the running
// worker ends within a poll and the termination grace), and the cells that finished are the answer.
Report run_here(const std::vector<Cell>& cells, int repeats, InputScheme scheme, double seconds_left) {
  Config config;
  config.input_scheme = scheme;
  config.device = cells.empty() ? "cpu" : cells.front().device;
  config.repeats = repeats;
  config.warmup = 1;
  config.processes = 1;
  AuditOptions options = local_audit_options();
  options.resumable = false;
  options.cells = cells;
  options.timing.rounds = 1;  // digests, not timings
  const auto deadline = seconds_of(Clock::now()) + seconds_left;
  bool out_of_time = false;
  options.stop_requested = [&] {
    out_of_time = out_of_time || seconds_of(Clock::now()) >= deadline;
    return stop_requested() || out_of_time;
  };
  options.on_warning = [](const std::string& warning) { print_message("warning: " + warning); };
  auto result = run_audit(config, registered_catalogue(), options);
  if (!result.report.complete && stop_requested()) throw Interrupted{};
  result.report.complete = true;  // what it had time for: its journal serves no resume
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
  explain_command->add_option("--model", arguments->models,
                              "The model file (TorchScript or AOTInductor package) a model cell re-runs, matched to "
                              "the report's by file name or model name; a report's is never loaded (repeatable)");
  explain_command->add_option("--inputs", arguments->inputs,
                              "The inputs file (torch.save) of a model cell whose report names one, matched to the "
                              "report's by file name; a report's is never read (repeatable)");
  for (const auto* format : explanation_formats()) {
    const auto index = static_cast<std::size_t>(format - output_formats().data());
    explain_command->add_option("--" + format->name, arguments->outputs.paths[index], format->help);
  }
  return {explain_command,
          [arguments] {
            const auto started = seconds_of(Clock::now());  // loading the reports counts too
            check_outputs(arguments->outputs.named(), {{"before", arguments->before}, {"after", arguments->after}});
            // torch is found, not imported: the py workers that re-run the cells import it (a torch that
            // breaks on import fails the first of them as the machine's failure, naming it, as in `py`).
            const auto python =
                arguments->python.empty()
                    ? std::string()
                    : checked_python("--python", arguments->python, temporary_folder(), {"xxhash"}, true).python;
            auto before = load_comparable(arguments->before);
            if (before.cells.empty())
              throw UserError(arguments->before + ": has no cells; there is nothing to explain");
            std::vector<std::string> keys;
            for (const auto& cell : before.cells) keys.push_back(cell.key);
            before.models = models_named_by_user(before.models, keys, before.source,
                                                 {.command = "explain",
                                                  .python = python,
                                                  .callables = arguments->callables,
                                                  .model_files = arguments->models,
                                                  .input_files = arguments->inputs});
            std::optional<Snapshot> after;
            if (!arguments->after.empty()) after = load_comparable(arguments->after);
            ExplainOptions options;
            options.time_limit_seconds = arguments->time_limit;
            options.clock = [] { return seconds_of(Clock::now()); };
            options.started = started;
            options.here = command_fingerprint();
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
                  [repeats, scheme](const std::vector<Cell>& cells, double seconds_left) {
                    return run_here(cells, repeats, scheme, seconds_left);
                  },
                  options);
            } catch (const Interrupted&) {
              std::cerr << "interrupted: nothing was explained\n";
              return 130;
            }
            print_explanation(explanation, std::cout);
            std::cout << std::flush;
            const auto failures = write_explanations(arguments->outputs.files(), explanation);
            for (const auto& failure : failures) print_message("repro-audit: " + failure);
            if (!failures.empty()) return 2;
            // A cell that cannot run here explains nothing: the setup here is the user's to fix.
            for (const auto& cell : explanation.not_run_here) print_message("repro-audit: cannot explain " + cell);
            if (!explanation.not_run_here.empty()) return 2;
            return explanation_failed(explanation) ? 1 : 0;
          },
          /*needs_torch=*/{},
          /*cpu_side_may_run=*/true};  // repro-audit-cpu runs it where it can (cli/torch_side.h)
}

}  // namespace repro_audit
