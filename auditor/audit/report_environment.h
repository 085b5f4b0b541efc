#pragma once
// The environment a report records: the fingerprint of a worker that inherited the user's environment,
// completed with what that worker could not know.
#include <functional>
#include <nlohmann/json.hpp>

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

}  // namespace repro_audit
