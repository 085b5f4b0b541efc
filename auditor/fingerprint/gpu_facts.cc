#include "fingerprint/gpu_facts.h"

#include <map>

namespace repro_audit {

nlohmann::json gpu_facts_json(const GpuFacts& facts) {
  nlohmann::json cuda = nlohmann::json::object();
  if (facts.compiled_runtime) cuda["compiled_runtime"] = *facts.compiled_runtime;
  if (facts.runtime) cuda["runtime"] = *facts.runtime;
  if (facts.driver) cuda["driver"] = *facts.driver;
  cuda["available"] = facts.available;
  if (!facts.reason.empty()) cuda["reason"] = facts.reason;
  if (facts.cudnn) cuda["cudnn"] = *facts.cudnn;
  if (facts.cublas) cuda["cublas"] = *facts.cublas;
  if (facts.nccl) cuda["nccl"] = *facts.nccl;
  if (facts.devices) {
    cuda["devices"] = nlohmann::json::array();
    for (const auto& device : *facts.devices) {
      nlohmann::json entry = {{"name", device.name},
                              {"sm_count", device.sm_count},
                              {"compute_capability", std::to_string(device.major) + "." + std::to_string(device.minor)},
                              {"memory_bytes", device.memory_bytes}};
      if (device.ecc) entry["ecc"] = *device.ecc;
      if (device.mig) entry["mig"] = *device.mig;
      cuda["devices"].push_back(std::move(entry));
    }
  }
  if (facts.nvml_driver) cuda["nvml"] = *facts.nvml_driver;
  if (!facts.nvml_unavailable.empty()) cuda["nvml_unavailable"] = facts.nvml_unavailable;
  return cuda;
}

void add_gpu_sources(const GpuFacts& facts, nlohmann::json& sources) {
  const auto from = [](const std::string& call, const std::string& library) {
    return library.empty() ? call : call + " from " + library;
  };
  const bool built_with_cuda = facts.compiled_runtime.has_value();
  const std::string device_count = built_with_cuda ? "cudaGetDeviceCount()" : "this build (without CUDA)";
  const std::map<std::string, std::string> known = {
      {"compiled_runtime", "CUDART_VERSION (the CUDA headers this tool was built with)"},
      {"runtime", "cudaRuntimeGetVersion()"},
      {"driver", "cudaDriverGetVersion()"},
      {"available", device_count},
      {"reason", device_count},
      {"cudnn", "cudnnGetVersion() (at::detail::getCUDAHooks().versionRuntimeCuDNN())"},
      {"cublas", from("cublasGetProperty()", facts.cublas_library)},
      {"nccl", from("ncclGetVersion()", facts.nccl_library)},
      {"devices",
       "cudaGetDeviceProperties() (name, multiProcessorCount, major.minor, totalGlobalMem); "
       "ecc, mig: nvmlDeviceGetEccMode(), nvmlDeviceGetMigMode() by PCI bus id"},
      {"nvml", "nvmlSystemGetDriverVersion() (libnvidia-ml.so.1)"},
      {"nvml_unavailable", "dlopen(\"libnvidia-ml.so.1\"), nvmlInit_v2()"},
  };
  sources["cuda"] = built_with_cuda ? "the CUDA runtime, cuDNN, cuBLAS, NCCL and NVML" : "this build (without CUDA)";
  const auto cuda = gpu_facts_json(facts);  // named: items() of a temporary would dangle
  for (const auto& [key, value] : cuda.items()) sources["cuda." + key] = known.at(key);
}

std::string nccl_version_text(int code) {
  // NCCL_VERSION(X, Y, Z) is X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9 on.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

}  // namespace repro_audit
