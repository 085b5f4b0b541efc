// NVML through dlopen, from a fake table of its functions, and the shared-library loader under it.
#include "fingerprint/nvml.h"

#include <gtest/gtest.h>

#include "fingerprint/shared_library.h"

namespace repro_audit {
namespace {

// A fake NVML: two GPUs by bus id; the second has no ECC support and MIG on.
NvmlDeviceHandle* const kFirst = reinterpret_cast<NvmlDeviceHandle*>(0x1);
NvmlDeviceHandle* const kSecond = reinterpret_cast<NvmlDeviceHandle*>(0x2);
int shutdowns = 0;

NvmlApi fake_nvml() {
  NvmlApi api;
  api.init = [] { return 0; };
  api.shutdown = [] {
    ++shutdowns;
    return 0;
  };
  api.error_string = [](NvmlReturn status) { return status == 9 ? "Driver Not Loaded" : "Unknown Error"; };
  api.driver_version = [](char* version, unsigned length) {
    std::snprintf(version, length, "%s", "580.95.05");
    return 0;
  };
  api.device_by_pci_bus_id = [](const char* bus_id, NvmlDevice* device) {
    *device = std::string(bus_id) == "0000:17:00.0" ? kFirst : kSecond;
    return std::string(bus_id) == "0000:99:00.0" ? 2 : 0;  // NVML_ERROR_INVALID_ARGUMENT
  };
  api.ecc_mode = [](NvmlDevice device, int* current, int* pending) {
    *current = *pending = 1;
    return device == kFirst ? 0 : 3;  // NVML_ERROR_NOT_SUPPORTED
  };
  api.mig_mode = [](NvmlDevice device, unsigned* current, unsigned* pending) {
    *current = *pending = device == kSecond ? 1 : 0;
    return 0;
  };
  return api;
}

TEST(Nvml, ModesByBusIdInTheOrderAsked) {
  shutdowns = 0;
  const auto report = query_nvml(fake_nvml(), {"0000:65:00.0", "0000:17:00.0", "0000:99:00.0"});
  EXPECT_EQ(report.driver, "580.95.05");
  EXPECT_EQ(report.unavailable, "");
  ASSERT_EQ(report.devices.size(), 3u);
  EXPECT_EQ(report.devices[0].ecc, std::nullopt);  // not supported
  EXPECT_EQ(report.devices[0].mig, true);
  EXPECT_EQ(report.devices[1].ecc, true);
  EXPECT_EQ(report.devices[1].mig, false);
  EXPECT_EQ(report.devices[2].ecc, std::nullopt);  // NVML does not know that bus id
  EXPECT_EQ(report.devices[2].mig, std::nullopt);
  EXPECT_EQ(shutdowns, 1);
}

TEST(Nvml, InitFailureSaysWhy) {
  auto api = fake_nvml();
  api.init = [] { return 9; };  // NVML_ERROR_DRIVER_NOT_LOADED
  const auto report = query_nvml(api, {"0000:17:00.0"});
  EXPECT_EQ(report.unavailable, "nvmlInit_v2: Driver Not Loaded");
  EXPECT_EQ(report.driver, std::nullopt);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].ecc, std::nullopt);
  EXPECT_NE(query_nvml(NvmlApi{}, {}).unavailable, "");
}

TEST(Nvml, MissingLibraryIsAReasonNotAnError) {
  // Whether this host has a driver or not, the answer is one of the two, never both or neither.
  const auto report = query_nvml({});
  EXPECT_NE(report.driver.has_value(), !report.unavailable.empty());
}

TEST(SharedLibrary, LoadsByNameAndSaysWhyNot) {
  const SharedLibrary libc("libc.so.6");
  ASSERT_TRUE(libc.loaded()) << libc.error();
  EXPECT_EQ(libc.path().front(), '/');
  EXPECT_NE(libc.function<std::size_t (*)(const char*)>("strlen"), nullptr);
  EXPECT_EQ(libc.function<void (*)()>("no_such_symbol_in_libc"), nullptr);
  const SharedLibrary missing("libno-such-library.so.0");
  EXPECT_FALSE(missing.loaded());
  EXPECT_NE(missing.error().find("libno-such-library.so.0"), std::string::npos);
  EXPECT_EQ(missing.path(), "");
}

}  // namespace
}  // namespace repro_audit
