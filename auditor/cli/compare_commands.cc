// `baseline`, `compare` and `gate`: hold audits against each other and against stored baselines.
#include <unistd.h>

#include <iostream>

#include "cli/audit.h"
#include "cli/commands.h"
#include "cli/output_options.h"
#include "compare/baseline.h"
#include "compare/comparison_printers.h"
#include "compare/comparison_terminal.h"
#include "config/user_error.h"
#include "report/json_io.h"
#include "worker/probe.h"

namespace repro_audit {
namespace {

bool stdout_color() { return ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"); }

}  // namespace

Command add_baseline_command(CLI::App& app) {
  auto* baseline = app.add_subcommand("baseline", "Turn a report into a baseline (YAML) to keep in git");
  auto report = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  baseline->add_option("report", *report, "A report written by `run --json`")->required();
  baseline->add_option("-o,--output", *output, "The baseline file, e.g. baselines/NAME.yaml")->required();
  return {baseline, [report, output] {
            const auto loaded = load_report_file(*report);
            if (!loaded.complete)
              throw UserError(*report + ": the audit was interrupted; a baseline needs a whole audit");
            write_baseline_file(baseline_from_report(loaded, *output), *output);
            std::cout << "wrote " << *output << " (" << loaded.cells.size() << " cells)\n";
            return 0;
          }};
}

Command add_compare_command(CLI::App& app) {
  auto* compare = app.add_subcommand("compare", "Show what changed between two audits (reports or baselines)");
  auto before = std::make_shared<std::string>();
  auto after = std::make_shared<std::string>();
  auto threshold = std::make_shared<double>(CompareOptions{}.slower_threshold);
  auto outputs = std::make_shared<OutputArguments>();
  compare->add_option("before", *before, "Report or baseline from before, e.g. before the upgrade")->required();
  compare->add_option("after", *after, "Report or baseline from after")->required();
  compare->add_option("--slower-threshold", *threshold, "Relative change a timing must exceed (besides the spread)")
      ->check(CLI::Range(0.0, 100.0));
  add_output_options(compare, *outputs);
  return {compare, [before, after, threshold, outputs] {
            const auto comparison = compare_snapshots(load_comparable(*before), load_comparable(*after), {*threshold});
            write_comparisons(outputs->files(), comparison, nullptr);
            print_comparison(comparison, nullptr, std::cout, stdout_color());
            return 0;
          }};
}

Command add_gate_command(CLI::App& app) {
  auto* gate = app.add_subcommand("gate", "Hold an audit against a baseline: exit 0 passed, 1 failed");
  auto baseline = std::make_shared<std::string>();
  auto report = std::make_shared<std::string>();
  auto policy = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto device = std::make_shared<std::string>();
  auto outputs = std::make_shared<OutputArguments>();
  gate->add_option("--baseline", *baseline, "The baseline to hold the audit against")->required();
  gate->add_option("--report", *report, "A report to judge (default: run the audit now)");
  gate->add_option("--policy", *policy, "Gate policy YAML (default: the built-in policy)")->check(CLI::ExistingFile);
  gate->add_option("--config", *config, "Audit config when the audit runs now")->check(CLI::ExistingFile);
  gate->add_option("--device", *device, "auto | cpu | cuda | cuda:N, when the audit runs now");
  add_output_options(gate, *outputs);
  return {gate, [=] {
            const auto rules = policy->empty() ? default_gate_policy() : load_gate_policy_file(*policy);
            const auto held = load_comparable(*baseline);
            Snapshot current;
            if (!report->empty()) {
              current = load_comparable(*report);
            } else {
              const auto catalogue = registered_catalogue();
              Config audit = config->empty() ? Config{} : load_config_file(*config, catalogue);
              if (!device->empty()) {
                validate_device(*device, "--device");
                audit.device = *device;
              }
              AuditOptions options;
              options.on_start = [](const std::string& journal) { std::cerr << "journal: " << journal << "\n"; };
              const auto result = run_audit(audit, catalogue, options);
              current = baseline_from_report(result.report, "this audit");
            }
            const auto comparison = compare_snapshots(held, current, {rules.slower_threshold});
            const auto outcome = gate_outcome(comparison, rules);
            write_comparisons(outputs->files(), comparison, &outcome);
            print_comparison(comparison, &outcome, std::cout, stdout_color());
            return gate_exit_code(outcome);
          }};
}

}  // namespace repro_audit
