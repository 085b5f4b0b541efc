#pragma once
#include <string>

namespace repro_audit {

struct ResolvedDevice {
  std::string device;       // "cpu", "cuda:0"
  std::string unavailable;  // why the device cannot run here; empty when it can
};

// auto -> the first CUDA device when one is usable, else cpu; cuda -> cuda:0.
ResolvedDevice resolve_device(const std::string& requested);

}  // namespace repro_audit
