#include "fingerprint/nvml.h"

#include "fingerprint/shared_library.h"

namespace repro_audit {
namespace {

constexpr NvmlReturn kSuccess = 0;
constexpr unsigned kDriverVersionLength = 80;              // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";  // installed with the driver, never with CUDA

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

static NvmlApi nvml_api(const SharedLibrary& library) {
  NvmlApi api;
  api.init = library.function<decltype(api.init)>("nvmlInit_v2");
  api.shutdown = library.function<decltype(api.shutdown)>("nvmlShutdown");
  api.error_string = library.function<decltype(api.error_string)>("nvmlErrorString");
  api.driver_version = library.function<decltype(api.driver_version)>("nvmlSystemGetDriverVersion");
  api.device_by_pci_bus_id = library.function<decltype(api.device_by_pci_bus_id)>("nvmlDeviceGetHandleByPciBusId_v2");
  api.ecc_mode = library.function<decltype(api.ecc_mode)>("nvmlDeviceGetEccMode");
  api.mig_mode = library.function<decltype(api.mig_mode)>("nvmlDeviceGetMigMode");
  api.clock_info = library.function<decltype(api.clock_info)>("nvmlDeviceGetClockInfo");
  return api;
}

NvmlReport query_nvml(const std::vector<std::string>& pci_bus_ids) {
  const SharedLibrary library(kNvmlLibrary);
  if (!library.loaded()) {
    NvmlReport report;
    report.devices.resize(pci_bus_ids.size());
    report.unavailable = library.error();
    return report;
  }
  return query_nvml(nvml_api(library), pci_bus_ids);
}

NvmlClock::NvmlClock(const std::string& pci_bus_id) {
  auto library = std::make_shared<SharedLibrary>(kNvmlLibrary);
  if (!library->loaded()) {
    unavailable_ = library->error();
    return;
  }
  api_ = nvml_api(*library);
  library_ = std::move(library);
  open(pci_bus_id);
}

NvmlClock::NvmlClock(const NvmlApi& api, const std::string& pci_bus_id) : api_(api) { open(pci_bus_id); }

void NvmlClock::open(const std::string& pci_bus_id) {
  if (api_.init == nullptr || api_.shutdown == nullptr || api_.clock_info == nullptr ||
      api_.device_by_pci_bus_id == nullptr) {
    unavailable_ = "the NVML library lacks nvmlInit_v2, nvmlDeviceGetClockInfo or nvmlDeviceGetHandleByPciBusId_v2";
    return;
  }
  if (const auto status = api_.init(); status != kSuccess) {
    unavailable_ = error_text(api_, "nvmlInit_v2", status);
    return;
  }
  initialised_ = true;
  if (const auto status = api_.device_by_pci_bus_id(pci_bus_id.c_str(), &device_); status != kSuccess) {
    unavailable_ = error_text(api_, "nvmlDeviceGetHandleByPciBusId_v2", status);
    device_ = nullptr;
  }
}

NvmlClock::~NvmlClock() {
  if (initialised_) api_.shutdown();
}

unsigned NvmlClock::sm_mhz() const {
  constexpr int kSmClock = 1;  // NVML_CLOCK_SM
  unsigned mhz = 0;
  if (device_ == nullptr || api_.clock_info(device_, kSmClock, &mhz) != kSuccess) return 0;
  return mhz;
}

}  // namespace repro_audit
