#include "cli/audit.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "config/version.h"
#include "supervisor/supervisor.h"
#include "worker/device.h"
#include "worker/environment.h"

namespace repro_audit {

std::string own_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

nlohmann::json config_to_json(const Config& config) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& selection : config.probes) probes.push_back({{"probe", selection.probe}, {"variants", selection.variants}});
  return {{"source", config.source},       {"device", config.device},     {"probes", probes},
          {"profiles", config.profiles},   {"axes", config.axes},         {"full_matrix", config.full_matrix},
          {"repeats", config.repeats},     {"warmup", config.warmup},     {"processes", config.processes},
          {"seed", config.seed},           {"timeout", config.timeout_seconds}, {"fail_on", config.fail_on}};
}

Report run_audit(const Config& config, const Catalogue& catalogue, const AuditHooks& hooks) {
  const auto started = std::chrono::steady_clock::now();
  const auto device = resolve_device(config.device);
  auto plan = make_plan(config, catalogue, device.device);
  if (!device.unavailable.empty())
    for (auto& cell : plan.cells) cell.unsupported_reason = device.unavailable;

  const auto log_folder = std::filesystem::temp_directory_path() / ("repro-audit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(log_folder);
  SupervisorOptions options;
  options.executable = own_executable();
  options.device = device.device;
  options.repeats = config.repeats;
  options.warmup = config.warmup;
  options.processes = config.processes;
  options.log_folder = log_folder.string();
  options.stop_requested = hooks.stop_requested;
  nlohmann::json environment;
  options.on_environment = [&](const nlohmann::json& seen) {
    if (environment.is_null()) environment = seen;
  };
  options.on_cell = [&](const Cell& cell, const ProcessObservation& observation) {
    if (hooks.on_cell) hooks.on_cell(cell, observation.process);
  };
  const auto observations = run_batches(make_batches(plan.cells), options);
  std::filesystem::remove_all(log_folder);

  auto report = build_report(plan, observations, catalogue);
  report.tool_version = kToolVersion;
  report.environment = environment.is_null() ? environment_fingerprint() : environment;
  report.config = config_to_json(config);
  report.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace repro_audit
