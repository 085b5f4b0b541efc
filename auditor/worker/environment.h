#pragma once
// The environment fingerprint: what a result depends on besides the code. The torch side gathers
// the real inputs here; fingerprint/ (torch-free) turns them into the JSON with its sources.
#include <nlohmann/json.hpp>

#include "fingerprint/fingerprint.h"

namespace repro_audit {

// This process's inputs: /proc/cpuinfo, at::show_config(), the ATen capability in force, thread
// counts, the environment, uname, and the CUDA facts.
FingerprintInputs gather_fingerprint_inputs();

// build_fingerprint(gather_fingerprint_inputs()).
nlohmann::json environment_fingerprint();

// CUDA facts (runtime, driver, cuDNN, cuBLAS, NCCL, GPUs, NVML). Lives in a file of its own per
// platform: a CPU-only build says it was built without CUDA.
GpuFacts cuda_environment();

}  // namespace repro_audit
