#include "apply/settings_apply.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace repro_audit {
namespace {

bool truth(const std::string& value) { return value == "true"; }
std::string text(bool value) { return value ? "true" : "false"; }
at::Context& context() { return at::globalContext(); }

// How each setting reaches libtorch: one row per setting of setting_specs() that is not an environment
// variable (those reach the worker through its environment, set by the supervisor).
struct SettingHandler {
  const char* name;
  void (*apply)(const std::string& value);  // null: applied elsewhere, said in the row's comment
  std::string (*read_back)();               // null: libtorch cannot tell
};

const std::vector<SettingHandler>& handlers() {
  static const std::vector<SettingHandler> table = {
      {"allow_tf32",
       [](const std::string& value) {
         context().setAllowTF32CuBLAS(truth(value));
         context().setAllowTF32CuDNN(truth(value));
       },
       [] { return text(context().allowTF32CuBLAS()); }},
      // py cells only: the Python runner sets Inductor's autotuning switches (python_runner/python_subject.py).
      {"autotune", nullptr, nullptr},
      // py cells only: the Python runner compiles the callable (python_runner/python_cell.py).
      {"compile", nullptr, nullptr},
      {"cudnn_benchmark", [](const std::string& value) { context().setBenchmarkCuDNN(truth(value)); },
       [] { return text(context().benchmarkCuDNN()); }},
      {"cudnn_deterministic", [](const std::string& value) { context().setDeterministicCuDNN(truth(value)); },
       [] { return text(context().deterministicCuDNN()); }},
      {"cudnn_enabled", [](const std::string& value) { context().setUserEnabledCuDNN(truth(value)); },
       [] { return text(context().userEnabledCuDNN()); }},
      {"deterministic_algorithms",
       [](const std::string& value) { context().setDeterministicAlgorithms(value != "off", value == "warn"); },
       []() -> std::string {
         if (!context().deterministicAlgorithms()) return "off";
         return context().deterministicAlgorithmsWarnOnly() ? "warn" : "on";
       }},
      {"fill_uninitialized_memory",
       [](const std::string& value) { context().setDeterministicFillUninitializedMemory(truth(value)); },
       [] { return text(context().deterministicFillUninitializedMemory()); }},
      // py cells only: the Python runner sets torch._inductor.config.batch_invariant and .deterministic.
      {"inductor_batch_invariant", nullptr, nullptr},
      {"inductor_deterministic", nullptr, nullptr},
      // py cells that make a DataLoader: the Python runner rebuilds the loader (python_loader.py).
      {"loader_generator", nullptr, nullptr},
      {"loader_seed_workers", nullptr, nullptr},
      {"loader_workers", nullptr, nullptr},
      // A collective cell's rank count: its runner starts that many ranks (runners/collective_cell.h).
      {"ranks", nullptr, nullptr},
      // The runner calls torch.manual_seed before building inputs and before every run (worker.cc).
      {"seed", nullptr, nullptr},
      // py cells only: the Python runner seeds NumPy's and Python's global generators (python_randomness.py).
      {"seed_numpy", nullptr, nullptr},
      {"seed_random", nullptr, nullptr},
      {"threads", [](const std::string& value) { at::set_num_threads(std::stoi(value)); },
       [] { return std::to_string(at::get_num_threads()); }},
  };
  return table;
}

const SettingHandler* find_handler(const std::string& name) {
  for (const auto& handler : handlers())
    if (handler.name == name) return &handler;
  return nullptr;
}

void apply_scope(const FlagSet& settings, SettingScope scope) {
  for (const auto& [name, value] : settings) {
    const auto* spec = find_setting(name);
    if (!spec) throw std::invalid_argument(fmt::format("unknown setting '{}'", name));
    if (spec->scope != scope || value == kNotApplicable) continue;
    const auto* handler = find_handler(name);
    if (handler && handler->apply) handler->apply(value);
  }
}

}  // namespace

void check_setting_handlers() {
  std::vector<std::string> problems;
  for (const auto& spec : setting_specs()) {
    const bool handled = find_handler(spec.name) != nullptr;
    if (!handled && spec.environment_variable.empty())
      problems.push_back(fmt::format("'{}' has no row in settings_apply.cc", spec.name));
    if (handled && !spec.environment_variable.empty())
      problems.push_back(fmt::format("'{}' is set through {} and has a row too", spec.name, spec.environment_variable));
  }
  for (const auto& handler : handlers())
    if (!find_setting(handler.name))
      problems.push_back(fmt::format("settings_apply.cc has a row for unknown setting '{}'", handler.name));
  if (!problems.empty()) throw std::logic_error(fmt::format("settings: {}", fmt::join(problems, "; ")));
}

void apply_process_settings(const FlagSet& settings) {
  check_setting_handlers();
  apply_scope(settings, SettingScope::process);
}

void apply_cell_settings(const FlagSet& settings) { apply_scope(settings, SettingScope::in_process); }

std::string unhonoured_process_setting(const FlagSet& settings) {
  // ATen quietly falls back to the best level the CPU has when asked for one it lacks (avx512 on an
  // AVX2 host); results under that value would be another level's, so the cells are skipped instead.
  const auto it = settings.find("cpu_capability");
  if (it == settings.end() || it->second == kInherit || it->second == "native" || it->second == kNotApplicable)
    return "";
  auto in_force = at::get_cpu_capability();
  std::transform(in_force.begin(), in_force.end(), in_force.begin(), [](unsigned char c) { return std::tolower(c); });
  if (in_force == it->second) return "";
  return fmt::format("this CPU cannot run ATen capability {} (ATEN_CPU_CAPABILITY={} gave {})", it->second, it->second,
                     at::get_cpu_capability());
}

FlagSet read_back_settings() {
  FlagSet state;
  for (const auto& handler : handlers())
    if (handler.read_back) state[handler.name] = handler.read_back();
  for (const auto& spec : setting_specs())
    if (!spec.environment_variable.empty()) {
      const char* value = std::getenv(spec.environment_variable.c_str());
      state[spec.name] = value && *value ? value : kUnset;
    }
  return state;
}

}  // namespace repro_audit
