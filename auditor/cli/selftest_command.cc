// `selftest`: runs the control probes and says plainly whether the auditor can be trusted here.
#include <fmt/format.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "audit/run_policy.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "cli/output_paths.h"
#include "cli/power_check.h"
#include "cli/sensitivity_table.h"
#include "supervisor/cpu_capacity.h"
#include "common/atomic_file.h"
#include "common/user_error.h"
#include "probe/probe_catalogue.h"
#include "report/json_io.h"
#include "repro/parity.h"
#include "repro/python_check.h"
#include "worker/device.h"

namespace repro_audit {
namespace {

// The scripts' folder: removed when it goes out of scope, unless kept to show a disagreement.
class ScriptsFolder {
 public:
  ScriptsFolder() {
    auto name = (std::filesystem::path(temporary_folder()) / "repro-audit-parity-XXXXXX").string();
    if (!::mkdtemp(name.data()))
      throw UserError(fmt::format("cannot make a folder for the Python scripts ({}): {}", name, std::strerror(errno)));
    path_ = name;
  }
  ~ScriptsFolder() {
    std::error_code ignored;
    if (!kept_) std::filesystem::remove_all(path_, ignored);
  }
  ScriptsFolder(const ScriptsFolder&) = delete;
  ScriptsFolder& operator=(const ScriptsFolder&) = delete;
  const std::string& path() const { return path_; }
  void keep() { kept_ = true; }

 private:
  std::string path_;
  bool kept_ = false;
};

// --probe NAME names a probe with a Python twin; throws UserError naming the first that does not.
void check_twins_named(const Catalogue& catalogue, const std::vector<std::string>& only) {
  for (const auto& name : only) {
    const auto* probe = find_probe(catalogue, name);
    if (!probe || probe->python.code.empty())
      throw UserError(fmt::format("--probe {}: {}", name, probe ? "this probe has no Python twin" : "no such probe"));
  }
}

// The audit of `probes` alone under `config`'s flags; nullopt when it was interrupted.
std::optional<Report> audit_probes_again(Config config, const std::set<std::string>& probes, const Catalogue& catalogue,
                                         const AuditOptions& options) {
  config.probes.clear();
  for (const auto& probe : probes) config.probes.push_back({probe, {}});
  auto again = run_audit(config, catalogue, options);
  if (!again.report.complete) return std::nullopt;
  remove_finished_journal(again);
  return std::move(again.report);
}

// A control that must race but whose runs all agreed (on a busy machine its threads may not have run at
// once) is audited again, at most twice, with 5 times the runs; a cell that races then replaces the
// first. Returns false when an audit was interrupted.
bool race_controls_again(Config config, const Catalogue& catalogue, const AuditOptions& options, Report& report) {
  config.repeats *= 5;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::set<std::string> probes;
    for (const auto& cell : report.cells) {
      const auto* probe = find_probe(catalogue, cell.cell.probe);
      if (probe && probe->control_expects == VerdictKind::nondeterministic &&
          cell.verdict.kind != VerdictKind::nondeterministic)
        probes.insert(cell.cell.probe);
    }
    if (probes.empty()) return true;
    const auto again = audit_probes_again(config, probes, catalogue, options);
    if (!again) return false;
    for (auto& cell : report.cells)
      for (const auto& raced : again->cells)
        if (raced.cell.key == cell.cell.key && raced.verdict.kind == VerdictKind::nondeterministic) cell = raced;
  }
  return true;
}

// Every probe with a Python form, on `device` (the selftest's: auto is CUDA where there is one) under
// strict with one thread: its repro.py run with `python` (checked: it starts and imports torch) must give
// the C++ probe's digests (or verdict, where it declares why not). `only`: these probes' twins, none other
// (check_twins_named has refused a name without one).
int python_parity(const PythonCheck& python, const std::string& device, const std::vector<std::string>& only) {
  const auto resolved = resolve_device(device);
  if (!resolved.unavailable.empty())
    throw EnvironmentError(
        fmt::format("--device {}: {}; the Python twins cannot be checked there", device, resolved.unavailable));
  Config config;
  config.device = resolved.device;
  config.profiles = {"strict"};
  config.axes = {{"threads", {"1"}}};
  config.repeats = 2;
  // Digests, compared: the two runs show the verdict, and a warm-up would only be one more (the batch
  // invariance probes at f16 take seconds a run on a CPU without f16 arithmetic); the scripts run as many.
  config.warmup = 0;
  config.processes = 1;
  const auto catalogue = registered_catalogue();
  for (const auto& probe : catalogue)
    if (!probe.python.code.empty() && (only.empty() || std::count(only.begin(), only.end(), probe.name)))
      config.probes.push_back({probe.name, {}});
  AuditOptions options = local_audit_options();
  options.resumable = false;  // selftest offers no --resume
  // Digests, not timings: no timing-only runs, as an audit without costs (audit/run_policy.h).
  options.timing = decide_run_policy({.no_cost = true}, options.timing).timing;
  options.measure_sensitivity = false;  // verdicts and digests are compared, nothing else (7 of 60 s here)
  options.stop_requested = stop_requested;
  std::cout << fmt::format(
      "\nPython parity: {} probes on {} under strict, 1 thread, against {} (Python {}, torch {})\n",
      config.probes.size(), config.device == "cpu" ? "the CPU" : config.device, python.python, python.python_version,
      python.torch_version);
  auto result = run_audit(config, catalogue, options);
  if (!result.report.complete) return 130;
  remove_finished_journal(result);
  if (!race_controls_again(config, catalogue, options, result.report)) return 130;
  ScriptsFolder folder;
  ParityOptions parity{python.python,
                       folder.path(),
                       worker_executable(config.device),
                       temporary_folder(),
                       2,
                       std::max(1u, std::thread::hardware_concurrency())};
  parity.stop_requested = stop_requested;
  const auto outcome = run_parity(result.report, catalogue, parity);
  if (!outcome.complete) return 130;
  std::cout << parity_text(outcome);
  const auto compared = std::count_if(outcome.cells.begin(), outcome.cells.end(), [](const ParityCell& cell) {
    return cell.status != "skipped" && cell.status != "not run";
  });
  const auto not_run =
      outcome.not_run() == 0 ? std::string() : fmt::format(", {} not run (see above)", outcome.not_run());
  if (outcome.failures() == 0 && outcome.not_run() == 0 && compared > 0) {
    const auto absent =
        std::count_if(outcome.paths.begin(), outcome.paths.end(), [](const ParityPath& path) { return !path.applies; });
    std::cout << fmt::format("\nPython parity passed: {} cells agree with Python torch {}; {} declared paths hold{}.\n",
                             compared, outcome.python_torch, outcome.paths.size() - absent,
                             absent ? fmt::format(", {} are not in this torch yet", absent) : "");
    return 0;
  }
  if (outcome.failures() == 0) {  // nothing to show in the scripts: nothing compared, or nothing run
    std::cout << fmt::format("\nPython parity FAILED: {} cells compared{}.\n", compared, not_run);
    return 1;
  }
  folder.keep();
  std::cout << fmt::format("\nPython parity FAILED: {} disagreement(s){} (scripts kept in {}).\n", outcome.failures(),
                           not_run, folder.path());
  return 1;
}

// A timing control's strict cell must show its known cost: 1.0 as no measurable cost (~1.0x), any
// other as a ratio whose 95% interval excludes 1 and whose value is within 15% of the known one.
std::string timing_control_problem(const CellReport& cell, const VariantInfo& variant) {
  if (!variant.expected_cost || deterministic_mode(cell.cell.settings) != DeterministicMode::on) return "";
  const double expected = *variant.expected_cost;
  if (!cell.cost) return "no cost measured";
  const auto& cost = *cell.cost;
  if (expected == 1.0) return cost.measurable() ? "a cost where there is none: " + cost_detail(cost) : "";
  if (!cost.measurable() || std::abs(cost.value / expected - 1.0) > 0.15)
    return fmt::format("expected {:.1f}x, measured {}", expected, cost_detail(cost));
  return "";
}

// A timing control whose verdict is right but whose cost is off is timed once more before it counts as
// wrong: a load that lands on one of its cells (another job on the machine) is a cost the timer rightly
// sees, while a broken timer misses twice. Each cell that passes the second time replaces the first and
// is named, with what its first timing showed. Returns false when the second audit was interrupted.
bool retime_timing_controls(const Config& config, const Catalogue& catalogue, const AuditOptions& options,
                            Report& report, std::vector<std::string>& notes) {
  std::map<std::string, std::string> first_problems;
  std::set<std::string> probes;
  for (const auto& cell : report.cells) {
    const auto* probe = find_probe(catalogue, cell.cell.probe);
    const auto* variant = probe ? probe->find_variant(cell.cell.variant) : nullptr;
    if (!variant || cell.verdict.kind != *probe->control_expects) continue;
    const auto problem = timing_control_problem(cell, *variant);
    if (problem.empty()) continue;
    first_problems[cell.cell.key] = problem;
    probes.insert(cell.cell.probe);
  }
  if (probes.empty()) return true;
  const auto again = audit_probes_again(config, probes, catalogue, options);
  if (!again) return false;
  for (auto& cell : report.cells) {
    const auto first = first_problems.find(cell.cell.key);
    if (first == first_problems.end()) continue;
    for (const auto& retimed : again->cells) {
      if (retimed.cell.key != cell.cell.key) continue;
      const auto* probe = find_probe(catalogue, cell.cell.probe);
      if (retimed.verdict.kind != *probe->control_expects ||
          !timing_control_problem(retimed, *probe->find_variant(cell.cell.variant)).empty())
        break;
      cell = retimed;
      notes.push_back(fmt::format("{}: timed again (the first timing: {})", cell.cell.key, first->second));
    }
  }
  return true;
}

}  // namespace

Command add_selftest_command(CLI::App& app) {
  auto* selftest = app.add_subcommand("selftest", "Run the control probes: can this machine's audits be trusted?");
  auto device = std::make_shared<std::string>("auto");
  auto json_path = std::make_shared<std::string>();
  auto python = std::make_shared<std::string>();
  auto python_only = std::make_shared<bool>(false);
  auto only = std::make_shared<std::vector<std::string>>();
  selftest->add_option("--device", *device, "auto | cpu | cuda | cuda:N");
  auto* json_option = selftest->add_option("--json", *json_path, "Write the selftest's report as JSON");
  auto* python_option =
      selftest
          ->add_option(
              "--python", *python,
              "Also check that every probe's Python twin gives its bits, with this Python (its torch); it must "
              "first import torch within 120 s (REPRO_AUDIT_PYTHON_CHECK_SECONDS)")
          ->check([](const std::string& value) {
            return value.empty() ? "give a Python interpreter's name (looked up on PATH) or its path" : "";
          });
  // The Python twins alone: they need no quiet machine, the timed control does.
  auto* python_only_option =
      selftest
          ->add_flag("--python-only", *python_only,
                     "With --python: check the Python twins only; the controls are not run (nor said to pass)")
          ->needs(python_option)
          ->excludes(json_option);
  selftest->add_option("--probe", *only, "With --python-only: check these probes' twins only (repeatable)")
      ->needs(python_only_option);
  return {selftest,
          [device, json_path, python, python_only, only] {
            const auto catalogue = registered_catalogue();
            validate_device(*device, "--device");  // before the interpreter's check, which can take minutes
            check_twins_named(catalogue, *only);
            PythonCheck interpreter;
            if (!python->empty()) {
              // Checked first: the control audit takes minutes, a script per probe more.
              interpreter = checked_python("--python", *python, temporary_folder());
            }
            if (*python_only) {
              install_stop_handlers();
              return python_parity(interpreter, *device, *only);
            }
            Config config;
            config.device = *device;
            config.profiles = {"default", "strict"};
            config.axes = {{"threads", {"2"}}};
            for (const auto& probe : catalogue)
              if (probe.control_expects) config.probes.push_back({probe.name, {}});
            check_outputs({{"--json", *json_path}}, {});
            AuditOptions options = local_audit_options();
            options.resumable = false;  // selftest offers no --resume
            options.stop_requested = stop_requested;
            install_stop_handlers();
            auto result = run_audit(config, catalogue, options);
            auto& report = result.report;
            if (!report.complete) {
              std::error_code ignored;  // a selftest is quick to run again; its partial journal is no use
              std::filesystem::remove_all(result.journal, ignored);
              std::cerr << "interrupted: the selftest did not finish\n";
              return 130;
            }
            remove_finished_journal(result);
            std::vector<std::string> retimed;
            if (!retime_timing_controls(config, catalogue, options, report, retimed)) {
              std::cerr << "interrupted: the selftest did not finish\n";
              return 130;
            }
            if (!json_path->empty())
              write_file_atomically(
                  *json_path,
                  report_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
            int failures = 0;
            std::cout << fmt::format("{:<34} {:<22} {:<18} {:<18}{}\n", "control", "flag set", "expected", "observed",
                                     "detail");
            for (const auto& cell : report.cells) {
              const auto* probe = find_probe(catalogue, cell.cell.probe);
              const auto expected = *probe->control_expects;
              const auto* variant = probe->find_variant(cell.cell.variant);
              const auto cost_problem = variant ? timing_control_problem(cell, *variant) : std::string();
              const bool ok = cell.verdict.kind == expected && cost_problem.empty();
              failures += ok ? 0 : 1;
              auto detail = cell.verdict.message.substr(0, cell.verdict.message.find(';'));
              if (detail.size() > 60) detail = detail.substr(0, 57) + "...";
              if (variant && variant->expected_cost && cell.cost)
                detail = cost_problem.empty() ? "cost " + cost_detail(*cell.cost) : cost_problem;
              std::cout << fmt::format("{:<34} {:<22} {:<18} {:<18}{}{}\n", cell.cell.probe + "/" + cell.cell.variant,
                                       cell.cell.label, to_string(expected), to_string(cell.verdict.kind),
                                       ok ? "" : "<- WRONG ", detail);
            }
            for (const auto& note : retimed) std::cout << note << "\n";
            std::cout << "\n";
            const int insensitive = print_sensitivities(check_sensitivities({}, 0, usable_cores()), 0, std::cout);
            const auto power = check_power(*device);
            if (stop_requested()) return 130;
            std::cout << "\n" << power_check_text(power);
            const int parity = python->empty() ? 0 : python_parity(interpreter, *device, {});
            if (parity == 130) return 130;
            if (failures == 0 && insensitive == 0 && power.passed() && parity == 0) {
              std::cout << fmt::format(
                  "\nselftest passed: every control gave its expected verdict on {}, every accumulating probe's "
                  "inputs are sensitive to the order of accumulation, and the runs caught a rare divergence as "
                  "often as they should; this machine's audits can be trusted.\n",
                  report.device);
              return 0;
            }
            std::cout << fmt::format(
                "\nselftest FAILED: {} control cell(s) gave the wrong verdict on {}{}{}{}; "
                "do not trust this machine's audits until that is explained.\n",
                failures, report.device, power.passed() ? "" : ", the runs' statistical power fell short",
                insensitive == 0 ? ""
                                 : fmt::format(", {} variant(s) insensitive to the order of accumulation", insensitive),
                parity == 0 ? "" : ", and Python parity failed");
            return 1;
          },
          /*needs_torch=*/{},
          /*cpu_side_may_run=*/true};  // repro-audit-cpu runs it where it can (cli/torch_side.h)
}

}  // namespace repro_audit
