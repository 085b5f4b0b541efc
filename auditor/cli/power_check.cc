#include "cli/power_check.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "audit/run_policy.h"
#include "cli/interruption.h"
#include "cli/local_audit.h"
#include "probe/probe_catalogue.h"

namespace repro_audit {
namespace {

constexpr double kRate = 0.1;
constexpr int kCells = 20;
constexpr int kRequired = 15;  // of 20 at >= 95.8% each: failed by chance once in about 7000 selftests

}  // namespace

PowerCheck check_power(const std::string& device) {
  Config config;
  config.device = device;
  config.probes = {{"control.rare_divergence", {"p0.1"}}};
  config.profiles = {"default"};
  std::vector<std::string> seeds;
  for (int seed = 1; seed <= kCells; ++seed) seeds.push_back(std::to_string(seed));
  config.axes = {{"threads", {"1"}}, {"seed", seeds}};
  config.processes = 1;
  config.detect = kRate;
  config.repeats = repeats_to_detect(kRate, config.processes, config.warmup);
  AuditOptions options = local_audit_options();
  options.resumable = false;  // selftest offers no --resume
  options.timing = decide_run_policy({.no_cost = true}, options.timing).timing;
  options.stop_requested = stop_requested;
  const auto result = run_audit(config, registered_catalogue(), options);
  PowerCheck check;
  check.complete = result.report.complete;
  if (check.complete) remove_finished_journal(result);
  check.runs = config.processes * (config.warmup + config.repeats);
  check.expected = 1.0 - std::pow(1.0 - kRate, check.runs);
  check.required = kRequired;
  for (const auto& cell : result.report.cells) {
    ++check.cells;
    if (cell.verdict.kind == VerdictKind::nondeterministic) ++check.caught;
  }
  if (check.cells != kCells) check.complete = false;
  return check;
}

std::string power_check_text(const PowerCheck& check) {
  return fmt::format(
      "Statistical power: control.rare_divergence/p0.1 (each run diverges with probability 0.1) in {} cells of {} "
      "runs (--detect 0.1): {} caught; expected {:.1f}% each ({:.1f} of {}); at least {} required: {}\n",
      check.cells, check.runs, check.caught, 100.0 * check.expected, check.expected * check.cells, check.cells,
      check.required, check.passed() ? "passed" : "FAILED");
}

}  // namespace repro_audit
