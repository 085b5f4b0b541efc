#include "fingerprint/numerics_environment.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace repro_audit {
namespace {

constexpr std::array<std::string_view, 16> kNames = {"CUBLAS_WORKSPACE_CONFIG",
                                                     "NVIDIA_TF32_OVERRIDE",
                                                     "CUDA_LAUNCH_BLOCKING",
                                                     "ATEN_CPU_CAPABILITY",
                                                     "MKL_CBWR",
                                                     "MKL_ENABLE_INSTRUCTIONS",
                                                     "MKL_NUM_THREADS",
                                                     "MKL_DYNAMIC",
                                                     "OMP_NUM_THREADS",
                                                     "OMP_DYNAMIC",
                                                     "OMP_SCHEDULE",
                                                     "TORCH_CUDNN_V8_API_DISABLED",
                                                     "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
                                                     "TORCH_BLAS_PREFER_CUBLASLT",
                                                     "TORCH_LINALG_PREFER_CUSOLVER",
                                                     "TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT"};

// Whole families: oneDNN's ISA and primitive-cache switches, Intel OpenMP's, NCCL's algorithm and
// protocol choices all change which code computes a result.
constexpr std::array<std::string_view, 4> kPrefixes = {"ONEDNN_", "DNNL_", "KMP_", "NCCL_"};

// Inside those families: logging only. A prefix also covers e.g. ONEDNN_VERBOSE_TIMESTAMP.
constexpr std::array<std::string_view, 4> kLoggingPrefixes = {"ONEDNN_VERBOSE", "DNNL_VERBOSE", "MKL_VERBOSE",
                                                              "NCCL_DEBUG"};

bool starts_with_any(std::string_view name, const auto& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view prefix) { return name.starts_with(prefix); });
}

}  // namespace

EnvironmentVariables environment_variables(const char* const* envp) {
  EnvironmentVariables variables;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string_view entry = *envp;
    const auto equals = entry.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    variables.emplace(entry.substr(0, equals), entry.substr(equals + 1));
  }
  return variables;
}

bool changes_numerics(const std::string& name) {
  if (starts_with_any(name, kLoggingPrefixes)) return false;
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end() || starts_with_any(name, kPrefixes);
}

EnvironmentVariables numerics_environment(const EnvironmentVariables& environment) {
  EnvironmentVariables kept;
  for (const auto& [name, value] : environment)
    if (changes_numerics(name)) kept.emplace(name, value);
  return kept;
}

}  // namespace repro_audit
