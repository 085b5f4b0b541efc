// CUDA builds: runtime and driver versions, cuDNN, cuBLAS, NCCL, each GPU's name, compute
// capability, SM count and memory, and through NVML the driver version and ECC/MIG modes.
// On a machine with no driver every query fails softly and the fingerprint says why.
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <ATen/detail/CUDAHooksInterface.h>

#include <string>
#include <vector>

#include "fingerprint/nvml.h"
#include "fingerprint/shared_library.h"
#include "worker/environment.h"

namespace repro_audit {
namespace {

// cuBLAS and NCCL are opened by name rather than linked: libtorch_cuda has already loaded the
// copies it computes with (a wheel's own, found through its RPATH), and dlopen of the same soname
// returns exactly those, whereas linking CUDA::cublas could put the toolkit's copy first in the
// process and change what libtorch runs. Neither is required: absent, the key is absent.
void read_cublas(GpuFacts& facts) {
  const SharedLibrary library("libcublas.so." + std::to_string(CUDART_VERSION / 1000));
  const auto get_property = library.function<decltype(&cublasGetProperty)>("cublasGetProperty");
  int major = 0, minor = 0, patch = 0;
  if (get_property == nullptr || get_property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      get_property(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      get_property(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return;
  facts.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  facts.cublas_library = library.path();
}

void read_nccl(GpuFacts& facts) {
  const SharedLibrary library("libnccl.so.2");
  // ncclResult_t ncclGetVersion(int* version), declared here: NCCL's header ships apart from CUDA.
  using NcclGetVersion = int (*)(int* version);
  const auto get_version = library.function<NcclGetVersion>("ncclGetVersion");
  int code = 0;
  if (get_version == nullptr || get_version(&code) != 0) return;
  facts.nccl = nccl_version_text(code);
  facts.nccl_library = library.path();
}

// The GPUs' properties; returns their PCI bus ids, by which NVML finds the same devices.
std::vector<std::string> read_devices(GpuFacts& facts, int count) {
  facts.devices.emplace();
  std::vector<std::string> bus_ids;
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) != cudaSuccess) continue;
    facts.devices->push_back({properties.name, properties.multiProcessorCount, properties.major, properties.minor,
                              static_cast<std::uint64_t>(properties.totalGlobalMem), std::nullopt, std::nullopt});
    char bus_id[32] = {};
    bus_ids.push_back(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess ? bus_id : "");
  }
  return bus_ids;
}

}  // namespace

GpuFacts cuda_environment() {
  GpuFacts facts;
  facts.compiled_runtime = CUDART_VERSION;
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) facts.runtime = runtime;
  (void)cudaDriverGetVersion(&driver);
  facts.driver = driver;  // 0: no driver installed
  // Library versions need no GPU: they are recorded whenever libtorch loaded the libraries.
  const auto& hooks = at::detail::getCUDAHooks();
  if (hooks.hasCuDNN()) facts.cudnn = hooks.versionRuntimeCuDNN();
  read_cublas(facts);
  read_nccl(facts);
  int count = 0;
  const auto status = cudaGetDeviceCount(&count);
  std::vector<std::string> bus_ids;
  if (status != cudaSuccess) {
    facts.reason = cudaGetErrorString(status);
    (void)cudaGetLastError();
  } else {
    facts.available = count > 0;
    bus_ids = read_devices(facts, count);
  }
  // Asked even without a usable GPU: NVML then tells the driver version, or why there is none.
  const auto nvml = query_nvml(bus_ids);
  for (std::size_t index = 0; index < bus_ids.size(); ++index) {
    (*facts.devices)[index].ecc = nvml.devices[index].ecc;
    (*facts.devices)[index].mig = nvml.devices[index].mig;
  }
  facts.nvml_driver = nvml.driver;
  facts.nvml_unavailable = nvml.unavailable;
  return facts;
}

}  // namespace repro_audit
