// `baseline`, `compare` and `gate`: hold audits against each other and against stored baselines.
#include <unistd.h>

#include <cmath>
#include <fmt/format.h>
#include <iostream>

#include "cli/audit_command.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "cli/option_checks.h"
#include "cli/output_options.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "common/user_error.h"
#include "compare/baseline.h"
#include "compare/comparison_terminal.h"
#include "output/output_format.h"
#include "probe/probe_catalogue.h"
#include "report/json_io.h"

namespace repro_audit {
namespace {

// A snapshot with no cells holds nothing to compare: bad input, not a pass.
Snapshot load_cells(const std::string& path) {
  auto snapshot = load_comparable(path);
  if (snapshot.cells.empty()) throw UserError(path + ": has no cells; there is nothing to compare");
  return snapshot;
}

// Cells with a verdict on both sides: skipped cells and cells present on one side only compare nothing.
int report_write_failures(const std::vector<std::string>& failures) {
  for (const auto& failure : failures) print_message("repro-audit: " + failure);
  return failures.empty() ? 0 : 2;
}

struct GateArguments {
  std::string baseline, report, policy, config, device, journal, resume;
  bool timing_across_platforms = false;
  OutputArguments outputs;
};

void check_gate_arguments(const GateArguments& arguments) {
  if (!arguments.report.empty())
    for (const auto& [option, value] : {std::pair{"--config", &arguments.config},
                                        {"--device", &arguments.device},
                                        {"--journal", &arguments.journal},
                                        {"--resume", &arguments.resume}})
      if (!value->empty())
        throw UserError(fmt::format("--report and {}: {} applies only when the gate runs the audit itself; give one",
                                    option, option));
  if (!arguments.resume.empty())
    for (const auto& [option, value] :
         {std::pair{"--config", &arguments.config}, {"--device", &arguments.device}, {"--journal", &arguments.journal}})
      if (!value->empty())
        throw UserError(
            fmt::format("--resume and {}: the audit continues with what it started with; give no {}", option, option));
  check_outputs(arguments.outputs.named(), {{"--baseline", arguments.baseline},
                                            {"--report", arguments.report},
                                            {"--policy", arguments.policy},
                                            {"--config", arguments.config}});
}

std::string gate_resume_hint(const GateArguments& arguments, const std::string& journal) {
  std::vector<std::string> words = {front_end_executable(), "gate",     "--baseline",
                                    arguments.baseline,     "--resume", journal};
  if (!arguments.policy.empty()) words.insert(words.end(), {"--policy", arguments.policy});
  for (auto& word : arguments.outputs.words()) words.push_back(word);
  return resume_command(words);
}

// Runs (or resumes) the audit the gate judges; nullopt after an interruption, the hint printed. Its
// inputs are made as the baseline's were (`scheme`): digests of other inputs compare nothing.
std::optional<AuditResult> gate_audit(const GateArguments& arguments, InputScheme scheme) {
  auto catalogue = registered_catalogue();
  Config audit;
  if (!arguments.resume.empty()) {
    audit = journal_config(arguments.resume, catalogue);
  } else {
    if (!arguments.config.empty()) audit = load_config_file(arguments.config, catalogue);
    if (!audit.models.empty()) audit.fail_on = FailOn::any;  // as `repro-audit model` judges them
    check_python_setup(audit, "", "", arguments.config);
    if (!arguments.device.empty()) {
      validate_device(arguments.device, "--device");
      audit.device = arguments.device;
    }
    audit.input_scheme = scheme;
    if (scheme != kCurrentInputScheme)
      print_message(fmt::format(
          "{}: its inputs were made with input scheme {}: this audit makes them the same way, so they can differ "
          "between hosts whose CPUs differ; record the baseline again for inputs identical on every host ({})",
          arguments.baseline, describe(scheme), describe(kCurrentInputScheme)));
  }
  AuditOptions options = command_line_audit_options(arguments.journal, arguments.resume);
  install_stop_handlers();
  catalogue = catalogue_with_models(catalogue, audit.models);
  auto result = run_audit(audit, catalogue, options);
  if (result.resumed_runs > 0)
    print_message(
        fmt::format("resumed: {} of {} cell runs were already in the journal", result.resumed_runs, result.total_runs));
  if (!result.report.complete) {
    print_message(fmt::format("interrupted: the finished cells are journaled in {}; nothing was gated\nresume with: {}",
                              result.journal, gate_resume_hint(arguments, result.journal)));
    return std::nullopt;
  }
  return result;
}

}  // namespace

Command add_baseline_command(CLI::App& app) {
  auto* baseline = app.add_subcommand("baseline", "Turn a report into a baseline (YAML) to keep in git");
  auto report = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  baseline->add_option("report", *report, "A report written by `run --json`")->required();
  baseline->add_option("-o,--output", *output, "The baseline file, e.g. baselines/NAME.yaml")->required();
  return {baseline,
          [report, output] {
            check_outputs({{"-o", *output}}, {{"report", *report}});
            const auto loaded = load_report_file(*report);
            if (!loaded.complete)
              throw UserError(*report + ": " + incomplete_reason(loaded) + "; a baseline needs a whole audit");
            if (loaded.cells.empty()) throw UserError(*report + ": has no cells; a baseline needs audited cells");
            write_baseline_file(baseline_from_report(loaded, *output), *output);
            std::cout << "wrote " << *output << " (" << loaded.cells.size() << " cells)\n";
            return 0;
          },
          [] { return false; }};
}

Command add_compare_command(CLI::App& app) {
  auto* compare = app.add_subcommand("compare", "Show what changed between two audits (reports or baselines)");
  auto before = std::make_shared<std::string>();
  auto after = std::make_shared<std::string>();
  auto threshold = std::make_shared<double>(CompareOptions{}.slower_threshold);
  auto outputs = std::make_shared<OutputArguments>();
  compare->add_option("before", *before, "Report or baseline from before, e.g. before the upgrade")->required();
  compare->add_option("after", *after, "Report or baseline from after")->required();
  auto across = std::make_shared<bool>(false);
  compare->add_option("--slower-threshold", *threshold, "Relative change a timing must exceed (besides the interval)")
      ->check(CLI::Range(0.0, 100.0));
  compare->add_flag("--compare-timing-across-platforms", *across,
                    "Compare timings even when the platforms differ (labelled as such)");
  add_output_options(compare, *outputs);
  return {compare,
          [before, after, threshold, across, outputs] {
            // CLI11's range check lets NaN through: every comparison with it is false.
            if (!std::isfinite(*threshold) || *threshold < 0 || *threshold > 100)
              throw UserError(fmt::format("--slower-threshold: must be a number from 0 to 100, not {}", *threshold));
            check_outputs(outputs->named(), {{"before", *before}, {"after", *after}});
            const auto comparison = compare_snapshots(load_cells(*before), load_cells(*after), {*threshold, *across});
            print_comparison(comparison, nullptr, std::cout, use_color(STDOUT_FILENO));
            std::cout << std::flush;
            return report_write_failures(write_comparisons(outputs->files(), comparison, nullptr));
          },
          [] { return false; }};
}

Command add_gate_command(CLI::App& app) {
  auto* gate = app.add_subcommand("gate", "Hold an audit against a baseline: exit 0 passed, 1 failed");
  auto arguments = std::make_shared<GateArguments>();
  gate->add_option("--baseline", arguments->baseline, "The baseline to hold the audit against")->required();
  gate->add_option("--report", arguments->report, "A report to judge (default: run the audit now)");
  gate->add_option("--policy", arguments->policy, "Gate policy YAML (default: the built-in policy)")
      ->check(input_file());
  gate->add_option("--config", arguments->config, "Audit config when the audit runs now")->check(input_file());
  gate->add_option("--device", arguments->device, "auto | cpu | cuda | cuda:N, when the audit runs now");
  gate->add_option("--journal", arguments->journal, "Journal folder of the audit the gate runs (see `run --journal`)");
  gate->add_option("--resume", arguments->resume, "Finish an interrupted gate's audit from its journal folder")
      ->check(CLI::ExistingDirectory);
  gate->add_flag("--compare-timing-across-platforms", arguments->timing_across_platforms,
                 "Compare timings even when the platforms differ (labelled as such)");
  add_output_options(gate, arguments->outputs);
  return {gate,
          [arguments] {
            check_gate_arguments(*arguments);
            const auto rules =
                arguments->policy.empty() ? default_gate_policy() : load_gate_policy_file(arguments->policy);
            const auto held = load_cells(arguments->baseline);
            Snapshot current;
            std::optional<AuditResult> audit;
            if (!arguments->report.empty()) {
              const auto report = load_report_file(arguments->report);
              if (!report.complete)
                throw UserError(arguments->report + ": " + incomplete_reason(report) + "; a gate needs a whole audit");
              if (report.cells.empty()) throw UserError(arguments->report + ": has no cells; there is nothing to gate");
              current = baseline_from_report(report, arguments->report);
            } else {
              audit = gate_audit(*arguments, held.input_scheme);
              if (!audit) return 130;
              current = baseline_from_report(audit->report, "this audit");
            }
            const auto comparison =
                compare_snapshots(held, current, {rules.slower_threshold, arguments->timing_across_platforms});
            auto outcome = gate_outcome(comparison, rules);
            const int compared = count_compared(comparison);
            if (compared == 0) outcome.passed = false;
            print_comparison(comparison, &outcome, std::cout, use_color(STDOUT_FILENO));
            std::cout << std::flush;
            const auto failures = write_comparisons(arguments->outputs.files(), comparison, &outcome);
            if (!failures.empty()) {
              report_write_failures(failures);
              if (audit)
                print_message(fmt::format("the audit is kept in its journal {}; write the outputs again with: {}",
                                          audit->journal, gate_resume_hint(*arguments, audit->journal)));
              return 2;
            }
            if (audit) remove_finished_journal(*audit);
            if (compared == 0) {
              std::cerr << "repro-audit: gate FAILED: nothing was compared: no cell has a verdict both in the "
                           "baseline and in this audit (cells skipped, or keys that do not match)\n";
              return 1;
            }
            return gate_exit_code(outcome);
          },
          [arguments] { return arguments->report.empty(); }};
}

}  // namespace repro_audit
