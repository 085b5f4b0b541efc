#pragma once
// The environment variables that change numerics or which kernels run (cuBLAS workspaces, TF32
// overrides, ATen's CPU capability, MKL's conditional numerical reproducibility, thread counts,
// oneDNN/NCCL/OpenMP tuning...). Torch-free: the environment is passed in.
#include <map>
#include <string>

namespace repro_audit {

using EnvironmentVariables = std::map<std::string, std::string>;

// `envp` as main() or `environ` has it ("NAME=value" entries, null-terminated); null gives {}.
EnvironmentVariables environment_variables(const char* const* envp);

// Whether a variable changes numerics or kernel choice. Logging and verbose switches
// (ONEDNN_VERBOSE, MKL_VERBOSE, NCCL_DEBUG, ...) do not; CUDA_VISIBLE_DEVICES picks a device,
// which the fingerprint records as the device itself.
bool changes_numerics(const std::string& name);

// The variables set in `environment` that change numerics, with their values.
EnvironmentVariables numerics_environment(const EnvironmentVariables& environment);

}  // namespace repro_audit
