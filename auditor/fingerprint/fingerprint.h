#pragma once
// The environment fingerprint (format version 2, see the report's `environment`): everything
// besides the code that can change a result's bits or the kernels that compute it, each fact with
// where it came from ("sources"). Built from plain inputs, so any machine can be described from
// its texts and numbers; the torch side gathers the real ones (worker/environment.cc).
#include <string>

#include <nlohmann/json.hpp>

#include "fingerprint/gpu_facts.h"
#include "fingerprint/numerics_environment.h"

namespace repro_audit {

inline constexpr int kFingerprintVersion = 2;

struct FingerprintInputs {
  std::string tool_version;
  std::string torch_version;  // TORCH_VERSION
  bool torch_cuda_build = false;
  std::string cpuinfo;               // the text of /proc/cpuinfo
  std::string show_config;           // the text of at::show_config()
  std::string cpu_capability;        // at::get_cpu_capability(): "NO AVX", "AVX2", "AVX512", ...
  unsigned logical_cpus = 0;         // std::thread::hardware_concurrency()
  int threads = 0;                   // at::get_num_threads()
  int interop_threads = 0;           // at::get_num_interop_threads()
  EnvironmentVariables environment;  // the whole process environment; filtered here
  std::string os;                    // uname: "Linux 6.18.44"
  std::string machine;               // uname: "x86_64"
  GpuFacts gpu;
};

nlohmann::json build_fingerprint(const FingerprintInputs& inputs);

}  // namespace repro_audit
