// CUDA builds: runtime and driver versions, cuDNN, and each GPU's name and SM count.
// On a machine with no driver every query fails softly and the fingerprint says why.
#include <cuda_runtime_api.h>

#include <ATen/detail/CUDAHooksInterface.h>

#include "worker/environment.h"

namespace repro_audit {

nlohmann::json cuda_environment() {
  nlohmann::json cuda = {{"compiled_runtime", CUDART_VERSION}};
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) cuda["runtime"] = runtime;
  const auto driver_status = cudaDriverGetVersion(&driver);
  cuda["driver"] = driver;  // 0: no driver installed
  int count = 0;
  const auto status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cuda["available"] = false;
    cuda["reason"] = cudaGetErrorString(status);
    (void)cudaGetLastError();
    return cuda;
  }
  (void)driver_status;
  cuda["available"] = count > 0;
  const auto& hooks = at::detail::getCUDAHooks();
  if (hooks.hasCuDNN()) cuda["cudnn"] = hooks.versionCuDNN();
  cuda["devices"] = nlohmann::json::array();
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) != cudaSuccess) continue;
    cuda["devices"].push_back(
        {{"name", properties.name},
         {"sm_count", properties.multiProcessorCount},
         {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)}});
  }
  return cuda;
}

}  // namespace repro_audit
