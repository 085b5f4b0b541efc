#include "worker/settings_apply.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <string>

namespace repro_audit {
namespace {

bool is_set(const FlagSet& settings, const std::string& name) {
  auto it = settings.find(name);
  return it != settings.end() && it->second != kNotApplicable;
}

bool truth(const FlagSet& settings, const std::string& name) { return settings.at(name) == "true"; }

}  // namespace

void apply_process_settings(const FlagSet& settings) {
  if (is_set(settings, "threads")) at::set_num_threads(std::stoi(settings.at("threads")));
}

void apply_cell_settings(const FlagSet& settings) {
  auto& context = at::globalContext();
  if (is_set(settings, "deterministic_algorithms")) {
    const auto& mode = settings.at("deterministic_algorithms");
    context.setDeterministicAlgorithms(mode != "off", mode == "warn");
  }
  if (is_set(settings, "fill_uninitialized_memory"))
    context.setDeterministicFillUninitializedMemory(truth(settings, "fill_uninitialized_memory"));
  if (is_set(settings, "cudnn_deterministic")) context.setDeterministicCuDNN(truth(settings, "cudnn_deterministic"));
  if (is_set(settings, "cudnn_benchmark")) context.setBenchmarkCuDNN(truth(settings, "cudnn_benchmark"));
  if (is_set(settings, "cudnn_enabled")) context.setUserEnabledCuDNN(truth(settings, "cudnn_enabled"));
  if (is_set(settings, "allow_tf32")) {
    context.setAllowTF32CuBLAS(truth(settings, "allow_tf32"));
    context.setAllowTF32CuDNN(truth(settings, "allow_tf32"));
  }
}

FlagSet read_back_settings() {
  auto& context = at::globalContext();
  const auto text = [](bool b) { return std::string(b ? "true" : "false"); };
  return {
      {"deterministic_algorithms", !context.deterministicAlgorithms()          ? "off"
                                   : context.deterministicAlgorithmsWarnOnly() ? "warn"
                                                                               : "on"},
      {"fill_uninitialized_memory", text(context.deterministicFillUninitializedMemory())},
      {"cudnn_deterministic", text(context.deterministicCuDNN())},
      {"cudnn_benchmark", text(context.benchmarkCuDNN())},
      {"cudnn_enabled", text(context.userEnabledCuDNN())},
      {"allow_tf32", text(context.allowTF32CuBLAS())},
      {"threads", std::to_string(at::get_num_threads())},
  };
}

}  // namespace repro_audit
