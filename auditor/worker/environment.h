#pragma once
// The environment fingerprint: what a result depends on besides the code.
#include <nlohmann/json.hpp>

namespace repro_audit {

nlohmann::json environment_fingerprint();

// CUDA facts (runtime, driver, GPU names and SM counts); a CPU-only build has an empty object.
// Lives in a file of its own per platform.
nlohmann::json cuda_environment();

}  // namespace repro_audit
