#include "fingerprint/nvml.h"

#include "fingerprint/shared_library.h"

namespace repro_audit {
namespace {

constexpr NvmlReturn kSuccess = 0;
constexpr unsigned kDriverVersionLength = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

std::string error_text(const NvmlApi& api, const char* call, NvmlReturn status) {
  const char* text = api.error_string != nullptr ? api.error_string(status) : nullptr;
  return std::string(call) + ": " + (text != nullptr ? text : "error " + std::to_string(status));
}

NvmlDeviceModes device_modes(const NvmlApi& api, const std::string& bus_id) {
  NvmlDeviceModes modes;
  NvmlDevice device = nullptr;
  if (api.device_by_pci_bus_id == nullptr || api.device_by_pci_bus_id(bus_id.c_str(), &device) != kSuccess)
    return modes;
  int ecc = 0, ecc_pending = 0;
  if (api.ecc_mode != nullptr && api.ecc_mode(device, &ecc, &ecc_pending) == kSuccess) modes.ecc = ecc == 1;
  unsigned mig = 0, mig_pending = 0;
  if (api.mig_mode != nullptr && api.mig_mode(device, &mig, &mig_pending) == kSuccess) modes.mig = mig == 1;
  return modes;
}

}  // namespace

NvmlReport query_nvml(const NvmlApi& api, const std::vector<std::string>& pci_bus_ids) {
  NvmlReport report;
  report.devices.resize(pci_bus_ids.size());
  if (api.init == nullptr || api.shutdown == nullptr) {
    report.unavailable = "the NVML library lacks nvmlInit_v2";
    return report;
  }
  if (const auto status = api.init(); status != kSuccess) {
    report.unavailable = error_text(api, "nvmlInit_v2", status);
    return report;
  }
  char version[kDriverVersionLength] = {};
  if (api.driver_version != nullptr && api.driver_version(version, kDriverVersionLength) == kSuccess)
    report.driver = version;
  for (std::size_t index = 0; index < pci_bus_ids.size(); ++index)
    report.devices[index] = device_modes(api, pci_bus_ids[index]);
  api.shutdown();
  return report;
}

NvmlReport query_nvml(const std::vector<std::string>& pci_bus_ids) {
  const SharedLibrary library("libnvidia-ml.so.1");  // installed with the driver, never with CUDA
  if (!library.loaded()) {
    NvmlReport report;
    report.devices.resize(pci_bus_ids.size());
    report.unavailable = library.error();
    return report;
  }
  NvmlApi api;
  api.init = library.function<decltype(api.init)>("nvmlInit_v2");
  api.shutdown = library.function<decltype(api.shutdown)>("nvmlShutdown");
  api.error_string = library.function<decltype(api.error_string)>("nvmlErrorString");
  api.driver_version = library.function<decltype(api.driver_version)>("nvmlSystemGetDriverVersion");
  api.device_by_pci_bus_id = library.function<decltype(api.device_by_pci_bus_id)>("nvmlDeviceGetHandleByPciBusId_v2");
  api.ecc_mode = library.function<decltype(api.ecc_mode)>("nvmlDeviceGetEccMode");
  api.mig_mode = library.function<decltype(api.mig_mode)>("nvmlDeviceGetMigMode");
  return query_nvml(api, pci_bus_ids);
}

}  // namespace repro_audit
