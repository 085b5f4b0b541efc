#include "worker/device.h"

#include <torch/cuda.h>

namespace repro_audit {

ResolvedDevice resolve_device(const std::string& requested) {
  const bool cuda = torch::cuda::is_available();
  if (requested == "auto") return {cuda ? "cuda:0" : "cpu", ""};
  if (requested == "cpu") return {"cpu", ""};
  const std::string device = requested == "cuda" ? "cuda:0" : requested;
  if (!cuda) return {device, "no CUDA device is usable on this machine (no GPU or no driver)"};
  const auto index = std::stoll(device.substr(device.find(':') + 1));
  if (index >= static_cast<long long>(torch::cuda::device_count()))
    return {device, "this machine has " + std::to_string(torch::cuda::device_count()) + " CUDA device(s)"};
  return {device, ""};
}

}  // namespace repro_audit
