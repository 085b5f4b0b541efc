#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>

#include "audit/progress.h"
#include "audit/run_policy.h"
#include "common/pattern.h"
#include "cli/audit_command.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "cli/option_checks.h"
#include "cli/output_options.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "common/atomic_file.h"
#include "common/user_error.h"
#include "compare/baseline.h"
#include "config/settings.h"
#include "plan/shard.h"
#include "probe/probe_catalogue.h"
#include "report/json_io.h"
#include "report/terminal_printer.h"

namespace repro_audit {
namespace {

// "2m", "90s", "1h", "120" (seconds) -> seconds.
double budget_seconds(const std::string& text) {
  static const Pattern form(R"(([0-9]+(\.[0-9]+)?)(s|m|h)?)");
  const auto match = form.match(text);
  if (!match || std::stod((*match)[1]) <= 0)
    throw UserError(fmt::format("--budget {}: expected a positive duration such as 90s, 2m or 1h", text));
  const double unit = (*match)[3] == "h" ? 3600 : (*match)[3] == "m" ? 60 : 1;
  return std::stod((*match)[1]) * unit;
}

// "name" or "name/variant" as given to --probe; repeated names merge.
void add_probe_argument(Config& config, const std::string& text, const Catalogue& catalogue) {
  const auto slash = text.find('/');
  ProbeSelection selection{text.substr(0, slash), {}};
  if (slash != std::string::npos) selection.variants.push_back(text.substr(slash + 1));
  validate_probe_selection(selection, catalogue, "--probe");
  for (auto& existing : config.probes)
    if (existing.probe == selection.probe) {
      if (existing.variants.empty() || selection.variants.empty())
        existing.variants.clear();
      else
        existing.variants.push_back(selection.variants[0]);
      return;
    }
  config.probes.push_back(selection);
}

// "threads=1,2"
void add_axis_argument(Config& config, const std::string& text, std::set<std::string>& given) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) throw UserError(fmt::format("--axis: expected NAME=V1,V2 but got '{}'", text));
  std::vector<std::string> values;
  std::string rest = text.substr(equals + 1);
  for (std::size_t start = 0; start <= rest.size();) {
    const auto comma = rest.find(',', start);
    values.push_back(rest.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const auto name = text.substr(0, equals);
  validate_axis(name, {}, "--axis");
  // A repeated --axis adds its values to the earlier one's; it replaces only the config file's.
  auto& axis = config.axes[name];
  if (!given.insert(name).second) values.insert(values.begin(), axis.begin(), axis.end());
  for (auto& value : values) value = normalised_value(*find_setting(name), value);
  validate_axis(name, values, "--axis");
  for (auto it = values.begin(); it != values.end(); ++it)
    if (std::find(values.begin(), it, *it) != it)
      throw UserError(
          fmt::format("--axis {}: the value {} is given twice (after leading zeros are dropped)", name, *it));
  axis = values;
}

// --fail-on stays a string option; it becomes the enum here, at the edge.
FailOn fail_on_argument(const std::string& text) {
  const auto fail_on = fail_on_from_string(text);
  if (!fail_on) throw UserError(fmt::format("--fail-on must be one of: {}, not '{}'", kFailOnNames, text));
  return *fail_on;
}

}  // namespace

void finish_model_config(const RunArguments& arguments, Config& config) {
  if (arguments.fail_on.empty()) config.fail_on = FailOn::any;
  try {
    (void)catalogue_with_models({}, config.models);
  } catch (const std::invalid_argument& error) {
    throw UserError(error.what());
  }
}

Config make_config(const RunArguments& arguments, const Catalogue& catalogue) {
  if (!arguments.resume.empty()) {
    if (!arguments.config_path.empty() || !arguments.probes.empty() || !arguments.kind.empty() ||
        !arguments.profiles.empty() || !arguments.axes.empty() || !arguments.matrix.empty() || arguments.repeats ||
        arguments.detect || arguments.processes || !arguments.device.empty())
      throw UserError("--resume: the audit continues with the config it started with; give no other audit options");
    if (!arguments.journal.empty())
      throw UserError("--resume and --journal: --resume names the journal to continue; give only one of them");
    auto config = journal_config(arguments.resume, catalogue);
    if (!arguments.fail_on.empty()) config.fail_on = fail_on_argument(arguments.fail_on);  // judging: may change
    return config;
  }
  if (!arguments.matrix.empty() && !arguments.profiles.empty())
    throw UserError(fmt::format("--matrix {} and --profile: the matrix sweeps axes instead of profiles; give one",
                                arguments.matrix));
  Config config = arguments.config_path.empty() ? Config{} : load_config_file(arguments.config_path, catalogue);
  if (!arguments.probes.empty()) config.probes.clear();
  for (const auto& probe : arguments.probes) add_probe_argument(config, probe, catalogue);
  if (!arguments.kind.empty()) {
    if (!arguments.probes.empty())
      throw UserError(
          fmt::format("--kind {} and --probe: --kind picks a suite, --probe names probes; give one", arguments.kind));
    config.kind = *probe_kind_from_string(arguments.kind);
    config.probes.clear();
  }
  if (!arguments.profiles.empty()) {
    for (const auto& profile : arguments.profiles) validate_profile(profile, "--profile");
    config.profiles = arguments.profiles;
    config.full_matrix = false;
  }
  if (arguments.matrix == "portability") {
    // The levels this machine can run; thread counts from the config (default 1 and 2), --axis overrides.
    const auto fingerprint = command_fingerprint();
    const auto levels = fingerprint.value("aten_cpu_capabilities", std::vector<std::string>{});
    const auto threads = config.axes.count("threads") ? config.axes.at("threads") : std::vector<std::string>{"1", "2"};
    config.axes = portability_axes(levels, threads);
  }
  if (!arguments.matrix.empty()) config.full_matrix = true;
  std::set<std::string> given_axes;
  for (const auto& axis : arguments.axes) add_axis_argument(config, axis, given_axes);
  if (arguments.repeats) config.repeats = *arguments.repeats;
  if (arguments.processes) config.processes = *arguments.processes;
  if (arguments.detect) {
    if (!arguments.budget.empty())
      throw UserError("--detect and --budget: --detect sets the runs a cell needs, --budget may cut them; give one");
    config.detect = *arguments.detect;
    config.repeats = repeats_to_detect(*arguments.detect, config.processes, config.warmup);
  }
  if (!arguments.device.empty()) {
    validate_device(arguments.device, "--device");
    config.device = arguments.device;
  }
  if (!arguments.fail_on.empty()) config.fail_on = fail_on_argument(arguments.fail_on);
  validate_config(config, catalogue, "the command line");
  check_py_only_axes(config, arguments.command, given_axes);
  return config;
}

namespace {

// The command that finishes this audit, with every output option again.
std::string resume_hint(const RunArguments& arguments, const std::string& journal) {
  std::vector<std::string> words = {front_end_executable(), arguments.command, "--resume", journal};
  for (auto& word : arguments.outputs.words()) words.push_back(word);
  if (!arguments.save_baseline.empty()) words.insert(words.end(), {"--save-baseline", arguments.save_baseline});
  if (!arguments.fail_on.empty()) words.insert(words.end(), {"--fail-on", arguments.fail_on});
  if (arguments.no_cost) words.push_back("--no-cost");
  if (arguments.quiet) words.push_back("--quiet");
  if (!arguments.budget.empty()) words.insert(words.end(), {"--budget", arguments.budget});
  if (arguments.jobs) words.insert(words.end(), {"--jobs", std::to_string(*arguments.jobs)});
  if (arguments.timing_rounds) words.insert(words.end(), {"--timing-rounds", std::to_string(*arguments.timing_rounds)});
  return resume_command(words);
}

// The shard from --shard or the scheduler's environment, and the timings that balance it.
void set_shard_options(const RunArguments& arguments, AuditOptions& options) {
  const auto from = *shard_from_from_string(arguments.shard_from);
  if (!arguments.resume.empty()) {
    if (!arguments.shard.empty() || arguments.shards || !arguments.timings.empty() || from == ShardFrom::env)
      throw UserError(
          "--resume: a resumed audit keeps the shard its journal names; give no --shard, --shards, "
          "--shard-from env or --timings");
    return;  // the scheduler's environment may differ now; the journal decides
  }
  if (!arguments.shard.empty()) {
    if (from == ShardFrom::env) throw UserError("--shard and --shard-from env: give one");
    options.shard = parse_shard(arguments.shard, "--shard");
    if (arguments.shards && *arguments.shards != options.shard->count)
      throw UserError(fmt::format("--shard {} and --shards {} disagree", arguments.shard, *arguments.shards));
  } else {
    options.shard = shard_from_environment([](const char* name) { return std::getenv(name); }, from, arguments.shards);
    if (!options.shard && arguments.shards)
      throw UserError(fmt::format("--shards {}: no shard index is given (--shard K/N, or a scheduler's environment)",
                                  *arguments.shards));
  }
  if (!arguments.timings.empty()) {
    if (!options.shard) throw UserError("--timings balances shards; give it with a shard");
    const auto report = load_report_file(arguments.timings);
    for (const auto& cell : report.cells)
      if (cell.verdict.timing.samples > 0) options.timings[cell.cell.key] = cell.verdict.timing.median_ns;
    options.timings_source = arguments.timings;
  }
}

int finish_run(const RunArguments& arguments, const Config& config, const AuditResult& result) {
  const auto& report = result.report;
  if (!arguments.quiet) print_matrix(report, std::cout, {use_color(STDOUT_FILENO), !arguments.no_cost});
  print_summary(report, config.fail_on, std::cout);
  if (!arguments.budget.empty()) {
    const auto limited = std::count_if(report.cells.begin(), report.cells.end(),
                                       [](const CellReport& cell) { return cell.verdict.budget_limited; });
    std::cout << fmt::format(
        "budget {}: {:.1f} s used; {} cell(s) ran fewer repeats (at least {} per process; "
        "their 95% divergence bounds say what fewer runs prove)\n",
        arguments.budget, report.duration_seconds, limited, kMinimumRepeats);
  }
  auto failures = write_reports(arguments.outputs.files(), report);
  // The matrix is an output too: lost on a full disk or a closed pipe, the journal keeps the audit.
  if (const auto failure = standard_output_failure(); !failure.empty()) {
    failures.push_back("cannot write to standard output: " + failure);
    std::cout.clear();  // said once, here
  }
  if (!report.complete) {
    print_message(fmt::format("interrupted: the finished cells are journaled in {}{}\nresume with: {}", result.journal,
                              arguments.save_baseline.empty() ? "" : "; no baseline was written",
                              resume_hint(arguments, result.journal)));
    for (const auto& failure : failures) print_message("repro-audit: " + failure);
    return 130;
  }
  if (!arguments.save_baseline.empty())
    for (auto& failure : write_files_atomically(
             {{arguments.save_baseline, baseline_to_yaml(baseline_from_report(report, arguments.save_baseline))}}))
      failures.push_back(failure);
  if (!failures.empty()) {
    for (const auto& failure : failures) print_message("repro-audit: " + failure);
    print_message(fmt::format("the audit is kept in its journal {}; write the outputs again with: {}", result.journal,
                              resume_hint(arguments, result.journal)));
    return 2;
  }
  remove_finished_journal(result);
  if (const auto reason = nothing_audited_reason(report); !reason.empty()) {
    print_message("repro-audit: nothing was audited: " + reason);
    return 1;
  }
  return audit_failed(report, config.fail_on) ? 1 : 0;
}

}  // namespace

void add_audit_options(CLI::App* run, RunArguments& arguments) {
  run->add_option("--profile", arguments.profiles,
                  "Profile to sweep (repeatable): " + fmt::format("{}", fmt::join(profile_names(), ", ")));
  run->add_option("--axis", arguments.axes,
                  "Axis crossed with the profiles, NAME=V1,V2 (repeatable), e.g. threads=1,2");
  run->add_option("--matrix", arguments.matrix,
                  "'full': sweep the cartesian product of the axes instead of profiles; 'portability': sweep "
                  "cpu_capability (native and each level below it), mkl_cbwr and threads")
      ->check(CLI::IsMember({"full", "portability"}));
  auto* repeats = run->add_option("--repeats", arguments.repeats, "Timed runs per process after warm-up")
                      ->check(CLI::Range(1, 100000));
  run->add_option(
         "--detect", arguments.detect,
         fmt::format("Choose the repeats so that a divergence shown by each run with this probability is caught "
                     "with 95% confidence ({} to {}; e.g. 0.01: 300 runs per cell)",
                     kMinDetectRate, kMaxDetectRate))
      ->check(CLI::Range(kMinDetectRate, kMaxDetectRate))
      ->excludes(repeats);
  run->add_option("--processes", arguments.processes, "Cross-process repeats")->check(CLI::Range(1, 1000));
  run->add_option("--device", arguments.device, "auto | cpu | cuda | cuda:N");
  run->add_option("--fail-on", arguments.fail_on,
                  arguments.command == "model"
                      ? "any: exit 1 where a cell is not deterministic (the default); contradiction: only where the "
                        "audit itself broke (error, crash, timeout)"
                      : "contradiction: exit 1 where a cell contradicts what its probe documents; any: every failing "
                        "cell")
      ->check(CLI::IsMember({"contradiction", "any"}));
  add_output_options(run, arguments.outputs);
  run->add_option("--save-baseline", arguments.save_baseline, "Also write the report as a baseline (YAML) to FILE");
  run->add_flag("--no-cost", arguments.no_cost,
                "Leave the cost ratios out of the matrix and take no timing-only runs (verdicts only, faster)");
  run->add_flag("--quiet", arguments.quiet, "Print no progress and no matrix: the summary only");
  run->add_option("--budget", arguments.budget,
                  "Time budget of the audit, e.g. 2m, 90s, 1h: slow cells get fewer repeats, never fewer than " +
                      std::to_string(kMinimumRepeats) + " per process");
  run->add_option(
         "--jobs", arguments.jobs,
         "Workers side by side for the processes after the first, which then only add digests (the first "
         "process runs alone: it times). 0: the cores (CPU affinity, within a cgroup CPU quota) divided by the "
         "cell's threads (1 on a GPU). Default: 1, or 0 with --no-cost")
      ->check(CLI::Range(0, 1024));
  run->add_option("--timing-rounds", arguments.timing_rounds,
                  "Rounds a cell's timing is taken in: the first after its determinism runs, the others in passes "
                  "over every cell at the end, each in a fresh worker, so the timings do not rest on one stretch of "
                  "one process (default 3; 1 with --no-cost or --budget)")
      ->check(CLI::Range(1, 20));
  run->add_option(
      "--journal", arguments.journal,
      "Folder journaling each finished cell (default: a new one under $XDG_STATE_HOME/repro-audit/journals, "
      "removed when the audit completes)");
  run->add_option("--resume", arguments.resume, "Finish an interrupted audit from its journal folder")
      ->check(CLI::ExistingDirectory);
  run->add_option("--shard", arguments.shard,
                  "Audit shard K of N (1 <= K <= N) of the plan's cells: the same partition on every host; "
                  "`merge` joins the shards' reports");
  run->add_option("--shards", arguments.shards,
                  "The shard count where the scheduler gives only an index (Kubernetes Indexed Jobs: the Job's "
                  "completions)")
      ->check(CLI::Range(1, 100000));
  run->add_option("--shard-from", arguments.shard_from,
                  "Without --shard: scheduler (the default) takes the shard from a Slurm job array "
                  "(SLURM_ARRAY_TASK_ID/COUNT/MIN) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX with "
                  "--shards); env from torchrun's RANK/WORLD_SIZE; none audits the whole plan")
      ->check(CLI::IsMember({"scheduler", "env", "none"}));
  run->add_option("--timings", arguments.timings,
                  "A report of an earlier audit whose timings balance the shards (default: the probes' declared "
                  "weights)")
      ->check(input_file());
}

int run_audit_command(const RunArguments& arguments, const Catalogue& catalogue, const Config& config,
                      PythonChecks* checks) {
  auto outputs = arguments.outputs.named();
  outputs.push_back({"--save-baseline", arguments.save_baseline});
  check_outputs(outputs, {{"--config", arguments.config_path}});
  AuditOptions options = command_line_audit_options(arguments.journal, arguments.resume);
  set_shard_options(arguments, options);
  RunRequest request{arguments.jobs, arguments.timing_rounds, 0, arguments.no_cost};
  if (!arguments.budget.empty()) request.budget_seconds = budget_seconds(arguments.budget);
  const auto policy = decide_run_policy(request, options.timing);
  options.jobs = policy.jobs;
  options.timing = policy.timing;
  options.budget_seconds = policy.budget_seconds;
  const auto mode = arguments.quiet                   ? Progress::Mode::quiet
                    : use_escape_codes(STDERR_FILENO) ? Progress::Mode::live
                                                      : Progress::Mode::final_line;
  std::unique_ptr<Progress> progress;
  options.on_plan = [&](const std::vector<Cell>& cells, const std::vector<double>& expected, int processes) {
    progress = std::make_unique<Progress>(std::cerr, mode, cells, expected, processes);
  };
  options.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    if (progress) progress->cell_finished(cell, observation);
  };
  options.on_round = [&](int round, int rounds, const std::vector<Cell>& cells) {
    if (progress) progress->round_started(round, rounds, cells.size());
  };
  options.on_timing_round = [&](const Cell&, const ProcessObservation&) {
    if (progress) progress->round_cell_finished();
  };
  if (checks) options.before_results = [checks] { checks->wait(); };
  if (checks) options.throw_if_refused = [checks] { checks->throw_if_refused(); };
  install_stop_handlers();
  const auto result = run_audit(config, catalogue, options);
  if (progress) progress->finish();
  if (const auto& shard = result.report.shard)
    print_message(fmt::format("shard {}/{} (from {}, balanced by {}): {} of the plan's {} cells", shard->index,
                              shard->count, shard->source, shard->balance, result.report.cells.size(),
                              shard->plan.size()));
  if (result.resumed_runs > 0)
    print_message(
        fmt::format("resumed: {} of {} cell runs were already in the journal", result.resumed_runs, result.total_runs));
  return finish_run(arguments, config, result);
}

Command add_run_command(CLI::App& app) {
  auto arguments = std::make_shared<RunArguments>();
  auto* run = app.add_subcommand("run", "Run the audit and print the verdict matrix");
  run->add_option("--config", arguments->config_path, "YAML config (optional; defaults equal an empty file)")
      ->check(input_file());
  run->add_option("--probe", arguments->probes, "Probe to run, NAME or NAME/VARIANT (repeatable)");
  run->add_option("--kind", arguments->kind,
                  "Suite to run when no --probe is named: repeat (repeat-and-digest probes, the default), "
                  "invariance (batch, layout and split invariance probes), collective (ranks of this host; "
                  "ranks 2, 3 and 4 unless --axis ranks=... says), all")
      ->check(CLI::IsMember({"repeat", "invariance", "collective", "all"}));
  add_audit_options(run, *arguments);
  return {
      run,
      [arguments] {
        const auto catalogue = registered_catalogue();
        const auto config = make_config(*arguments, catalogue);
        if (!config.models.empty()) {  // py callables go to `py`, model files to `model`: what audits them
          const bool python = std::any_of(config.models.begin(), config.models.end(),
                                          [](const ModelSpec& model) { return is_python_model(model); });
          const auto* command = python ? "py" : "model";
          throw UserError(arguments->resume.empty()
                              ? fmt::format("{} names {}: audit them with `repro-audit {} --config {}`", config.source,
                                            python ? "Python callables" : "models", command, config.source)
                              : fmt::format("{} journals a {} audit: resume it with `repro-audit {} --resume {}`",
                                            arguments->resume, command, command, arguments->resume));
        }
        return run_audit_command(*arguments, catalogue, config);
      },
      [arguments] { return arguments->matrix == "portability" || cuda_driver_loadable(); }};
}

}  // namespace repro_audit
