#pragma once
// What CUDA, its libraries and NVML report about the GPUs, as plain values: the CUDA build fills
// them from the real calls, a CPU-only build says it was built without CUDA, tests fill them by hand.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace repro_audit {

struct GpuDevice {
  std::string name;
  int sm_count = 0;
  int major = 0, minor = 0;        // compute capability
  std::uint64_t memory_bytes = 0;  // totalGlobalMem
  std::optional<bool> ecc, mig;    // from NVML; absent when it cannot say
};

struct GpuFacts {
  std::optional<int> compiled_runtime;  // CUDART_VERSION; absent: built without CUDA
  std::optional<int> runtime;           // cudaRuntimeGetVersion
  std::optional<int> driver;            // cudaDriverGetVersion; 0 when no driver is installed
  bool available = false;
  std::string reason;                             // why no GPU can be used; empty when one can
  std::optional<long> cudnn;                      // cudnnGetVersion of the loaded library, e.g. 92400
  std::optional<std::string> cublas, nccl;        // "13.0.0", "2.27.3"
  std::string cublas_library, nccl_library;       // the files those versions were read from
  std::optional<std::vector<GpuDevice>> devices;  // absent when the devices could not be counted
  std::optional<std::string> nvml_driver;         // the driver version NVML reports
  std::string nvml_unavailable;                   // why NVML could not be asked
};

// The fingerprint's "cuda" object (the keys the fingerprint format names).
nlohmann::json gpu_facts_json(const GpuFacts& facts);

// Adds "cuda" and "cuda.<key>" to `sources` for every key gpu_facts_json writes.
void add_gpu_sources(const GpuFacts& facts, nlohmann::json& sources);

// ncclGetVersion's code as text: 22703 -> "2.27.3"; before 2.9, 2804 -> "2.8.4".
std::string nccl_version_text(int code);

}  // namespace repro_audit
