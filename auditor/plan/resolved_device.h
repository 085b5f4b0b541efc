#pragma once
#include <string>

namespace repro_audit {

// The concrete device an audit runs on, as the torch side resolves it.
struct ResolvedDevice {
  std::string device;       // "cpu", "cuda:0"
  std::string unavailable;  // why the device cannot run here; empty when it can
};

}  // namespace repro_audit
