#pragma once
// NVML (the driver's management library) for what CUDA does not say: the driver's own version and
// each GPU's ECC and MIG modes. Loaded at run time when present, never linked nor required, and
// declared here from NVML's public C ABI, so no NVML or CUDA header is needed.
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

using NvmlReturn = int;                       // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceHandle*;  // nvmlDevice_t

// The entry points used, with NVML's signatures; a missing one stays null.
struct NvmlApi {
  NvmlReturn (*init)() = nullptr;                                                        // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;                                                    // nvmlShutdown
  const char* (*error_string)(NvmlReturn) = nullptr;                                     // nvmlErrorString
  NvmlReturn (*driver_version)(char* version, unsigned length) = nullptr;                // nvmlSystemGetDriverVersion
  NvmlReturn (*device_by_pci_bus_id)(const char* bus_id, NvmlDevice* device) = nullptr;  // ..ByPciBusId_v2
  // nvmlDeviceGetEccMode(device, nvmlEnableState_t* current, nvmlEnableState_t* pending); 1 = enabled
  NvmlReturn (*ecc_mode)(NvmlDevice device, int* current, int* pending) = nullptr;
  // nvmlDeviceGetMigMode(device, unsigned* current, unsigned* pending); 1 = NVML_DEVICE_MIG_ENABLE
  NvmlReturn (*mig_mode)(NvmlDevice device, unsigned* current, unsigned* pending) = nullptr;
  // nvmlDeviceGetClockInfo(device, nvmlClockType_t type, unsigned* clock_mhz); type 1 = NVML_CLOCK_SM
  NvmlReturn (*clock_info)(NvmlDevice device, int type, unsigned* clock_mhz) = nullptr;
};

struct NvmlDeviceModes {
  std::optional<bool> ecc, mig;  // absent when NVML cannot say (no such device, not supported)
};

struct NvmlReport {
  std::optional<std::string> driver;     // e.g. "580.95.05"
  std::string unavailable;               // why NVML could not be used; empty when it could
  std::vector<NvmlDeviceModes> devices;  // one per requested bus id, in the same order
};

// Asks `api` for the driver version and the modes of the GPUs at `pci_bus_ids` (as
// cudaDeviceGetPCIBusId prints them: CUDA's device order and CUDA_VISIBLE_DEVICES differ from
// NVML's indices, the bus id does not).
NvmlReport query_nvml(const NvmlApi& api, const std::vector<std::string>& pci_bus_ids);

// The same through libnvidia-ml.so.1, when it can be loaded.
NvmlReport query_nvml(const std::vector<std::string>& pci_bus_ids);

// One GPU's current SM clock, read as often as a timer needs it: NVML stays initialised while this
// lives. `sm_mhz()` is 0 when NVML cannot say (no library, no such device), and `unavailable()` why.
class NvmlClock {
 public:
  explicit NvmlClock(const std::string& pci_bus_id);  // through libnvidia-ml.so.1
  NvmlClock(const NvmlApi& api, const std::string& pci_bus_id);
  ~NvmlClock();
  NvmlClock(const NvmlClock&) = delete;
  NvmlClock& operator=(const NvmlClock&) = delete;

  unsigned sm_mhz() const;
  const std::string& unavailable() const { return unavailable_; }

 private:
  void open(const std::string& pci_bus_id);

  std::shared_ptr<void> library_;  // keeps libnvidia-ml loaded
  NvmlApi api_;
  NvmlDevice device_ = nullptr;
  bool initialised_ = false;
  std::string unavailable_;
};

}  // namespace repro_audit
