#pragma once
// The environment a report records: the fingerprint of a worker that inherited the user's environment,
// completed with what that worker could not know.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace repro_audit {

// `workers`: the first inheriting worker's fingerprint (null: none spoke, and `here` is taken whole).
// When the workers were repro-audit-cpu (`workers_lack_cuda`), their fingerprint has no CUDA facts:
// `torch_cuda_build`, `cuda` and their sources are taken from `here` (this process's fingerprint).
// `interpreter`: a py cell runner's facts (python, python_torch, python_torch_path, python_xxhash,
// test_switches and their sources), added when present.
nlohmann::json report_environment(const nlohmann::json& workers, bool workers_lack_cuda,
                                  const nlohmann::json& interpreter, const std::function<nlohmann::json()>& here);

// `fingerprint` with its CUDA facts replaced by `full`'s.
nlohmann::json with_cuda_facts(nlohmann::json fingerprint, const nlohmann::json& full);

// What an audit's workers said of the environment, as they say it. The platform is the user's own
// environment: a worker started with e.g. ATEN_CPU_CAPABILITY changed reports another capability, so only
// a worker that inherits the environment speaks for it. A py cell's runner adds its interpreter's facts
// (the torch it imports need not be the libtorch the worker was built with): no fingerprint of its own.
// The CUDA facts (library versions, driver, devices) come from any worker that has them, whatever its CPU
// settings: no setting an axis sweeps changes them.
class SeenEnvironment {
 public:
  // A worker's environment event: a fingerprint (it has "fingerprint") or an interpreter's facts.
  void add(const nlohmann::json& seen, bool inherits_environment);
  // report_environment of the first inheriting fingerprint, completed by the first with CUDA facts where
  // the workers lack them, else by `kept` (CUDA facts kept from an earlier audit, fingerprint/kept_cuda_facts.h,
  // where given); `here` is asked where no worker spoke, or none had CUDA facts and none were kept.
  nlohmann::json report(bool workers_lack_cuda, const std::function<nlohmann::json()>& here,
                        const nlohmann::json& kept = nullptr);
  // Where report()'s CUDA facts came from: "workers", "a worker", "kept" or "the supervisor" (`here`).
  const std::string& cuda_facts_from() const { return cuda_facts_from_; }

 private:
  nlohmann::json environment_, interpreter_, cuda_facts_;
  std::string cuda_facts_from_ = "workers";
};

}  // namespace repro_audit
