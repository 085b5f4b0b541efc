#include "explain/library_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace repro_audit {

const LibraryKeys& library_keys(const std::string& library) {
  static const std::vector<LibraryKeys> table = {
      {"MKL",
       {"CPU id", "CPU flags", "MKL", "threads", "env MKL_CBWR", "env MKL_ENABLE_INSTRUCTIONS"},
       "MKL_CBWR=COMPATIBLE (the `portable` profile) takes one code path on every x86 CPU; keep the MKL "
       "version and thread count"},
      {"oneDNN",
       {"CPU flags", "oneDNN", "threads", "env ONEDNN_MAX_CPU_ISA", "env DNNL_MAX_CPU_ISA"},
       "ONEDNN_MAX_CPU_ISA set to the older host's ISA on both, the same oneDNN (torch) version and thread "
       "count"},
      {"ATen",
       {"ATen capability", "CPU flags", "torch", "threads", "env ATEN_CPU_CAPABILITY"},
       "ATEN_CPU_CAPABILITY=default (the `portable` profile) and one torch version and thread count"},
      {"cuDNN",
       {"GPU", "cuDNN", "CUDA driver", "torch"},
       "the same GPU model, cuDNN and driver; cudnn_deterministic=true and cudnn_benchmark=false (`strict`)"},
      {"cuBLAS",
       {"GPU", "cuBLAS", "CUDA runtime", "env CUBLAS_WORKSPACE_CONFIG", "env NVIDIA_TF32_OVERRIDE"},
       "the same GPU model and cuBLAS; CUBLAS_WORKSPACE_CONFIG=:4096:8 (`strict`)"},
      {"cuBLASLt",
       {"GPU", "cuBLAS", "CUDA runtime", "env CUBLAS_WORKSPACE_CONFIG"},
       "the same GPU model and cuBLAS; CUBLAS_WORKSPACE_CONFIG=:4096:8 (`strict`)"},
      {"CUTLASS", {"GPU", "torch", "CUDA runtime"}, "the same GPU model and torch build"},
      {"other", {"torch", "CPU flags", "GPU"}, "the same torch build and hardware"},
  };
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const LibraryKeys& keys) { return keys.library == library; });
  return it != table.end() ? *it : table.back();
}

std::string keyed_on_text(const std::string& library, const std::vector<EnvironmentChange>& changes) {
  const auto& keys = library_keys(library);
  std::vector<std::string> parts;
  for (const auto& field : keys.fields) {
    const auto change = std::find_if(changes.begin(), changes.end(),
                                     [&](const EnvironmentChange& each) { return each.field == field; });
    // An environment variable set on neither side is no field of either fingerprint: left out.
    if (change == changes.end() && field.starts_with("env ")) continue;
    parts.push_back(fmt::format("{} ({})", field, change == changes.end() ? "unchanged" : change->difference));
  }
  return fmt::format("{} keys on {}", library == "other" ? "this kernel" : library, fmt::join(parts, ", "));
}

}  // namespace repro_audit
