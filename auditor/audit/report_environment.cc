#include "audit/report_environment.h"

#include <string>

#include "common/cuda_fact_keys.h"

namespace repro_audit {
namespace {

void add_interpreter_facts(nlohmann::json& environment, const nlohmann::json& interpreter) {
  if (!environment.is_object() || !interpreter.is_object()) return;
  for (const char* key : {"python", "python_torch", "python_torch_path", "python_xxhash", "test_switches"}) {
    if (!interpreter.contains(key) || !interpreter[key].is_string()) continue;
    environment[key] = interpreter[key];
    const auto& sources = interpreter.value("sources", nlohmann::json::object());
    if (sources.is_object() && sources.contains(key)) environment["sources"][key] = sources[key];
  }
}

}  // namespace

nlohmann::json with_cuda_facts(nlohmann::json fingerprint, const nlohmann::json& full) {
  if (!fingerprint.is_object() || !full.is_object()) return fingerprint;
  for (const auto* key : {"cuda", "torch_cuda_build"}) {
    fingerprint.erase(key);
    if (full.contains(key)) fingerprint[key] = full.at(key);
  }
  if (fingerprint.contains("sources") && fingerprint["sources"].is_object() && full.contains("sources") &&
      full.at("sources").is_object()) {
    auto& sources = fingerprint["sources"];
    for (auto it = sources.begin(); it != sources.end();)
      it = is_cuda_fact_key(it.key()) ? sources.erase(it) : std::next(it);
    for (const auto& [key, value] : full.at("sources").items())
      if (is_cuda_fact_key(key)) sources[key] = value;
  }
  return fingerprint;
}

nlohmann::json report_environment(const nlohmann::json& workers, bool workers_lack_cuda,
                                  const nlohmann::json& interpreter, const std::function<nlohmann::json()>& here) {
  auto environment = workers.is_null() ? here() : workers_lack_cuda ? with_cuda_facts(workers, here()) : workers;
  add_interpreter_facts(environment, interpreter);
  return environment;
}

void SeenEnvironment::add(const nlohmann::json& seen, bool inherits_environment) {
  if (!seen.is_object() || !seen.contains("fingerprint")) {
    if (interpreter_.is_null()) interpreter_ = seen;
    return;
  }
  if (environment_.is_null() && inherits_environment) environment_ = seen;
  if (cuda_facts_.is_null() && seen.value("torch_cuda_build", false)) cuda_facts_ = seen;
}

nlohmann::json SeenEnvironment::report(bool workers_lack_cuda, const std::function<nlohmann::json()>& here,
                                       const nlohmann::json& kept) {
  cuda_facts_from_ = "workers";
  return report_environment(environment_, workers_lack_cuda, interpreter_, [&] {
    if (!environment_.is_null() && !cuda_facts_.is_null()) {
      cuda_facts_from_ = "a worker";
      return cuda_facts_;
    }
    if (!environment_.is_null() && kept.is_object()) {  // no worker spoke: `here` is taken whole, not these
      cuda_facts_from_ = "kept";
      return kept;
    }
    cuda_facts_from_ = "the supervisor";
    return here();
  });
}

}  // namespace repro_audit
