#include "explain/library_keys.h"

#include <cctype>

#include "config/settings.h"

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

std::vector<std::string> library_settings(const std::string& library) {
  if (library == "oneDNN") return {"onednn_max_cpu_isa"};
  if (library == "MKL") return {"mkl_enable_instructions", "mkl_cbwr"};
  if (library == "ATen") return {"cpu_capability"};
  return {};
}

std::string isa_setting_value(const std::string& setting, const std::string& text) {
  std::string upper;
  for (const char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (setting == "onednn_max_cpu_isa") {
    // An implementation name ("jit:avx2", "brg_matmul:avx512_core_bf16") names oneDNN's own ISA.
    const auto colon = upper.rfind(':');
    const auto isa = colon == std::string::npos ? upper : upper.substr(colon + 1);
    const auto* spec = find_setting(setting);
    if (spec && is_valid_value(*spec, isa) && isa != kInherit) return isa;
    // The banner's short form: "SSE4.1", "AVX2", "AVX-512 (DL Boost)", "AVX-512 (DL Boost, bfloat16)".
    if (upper.starts_with("SSE4.1")) return "SSE41";
    if (upper.starts_with("AVX2")) return "AVX2";
    if (upper.starts_with("AVX-512")) {
      if (upper.find("AMX") != std::string::npos) return "AVX512_CORE_AMX";
      if (upper.find("BFLOAT16") != std::string::npos) return "AVX512_CORE_BF16";
      if (upper.find("DL BOOST") != std::string::npos) return "AVX512_CORE_VNNI";
      return "AVX512_CORE";
    }
    if (upper.starts_with("AVX")) return "AVX";
    return "";
  }
  if (setting == "mkl_enable_instructions") {
    if (upper.starts_with("SSE4.2") || upper.starts_with("SSE4_2")) return "SSE4_2";
    if (upper.starts_with("AVX2")) return "AVX2";
    if (upper.starts_with("AVX-512") || upper.starts_with("AVX512")) return "AVX512";
    if (upper.starts_with("AVX")) return "AVX";
    return "";
  }
  if (setting == "cpu_capability") {
    if (upper.starts_with("AVX512") || upper.starts_with("AVX-512")) return "avx512";
    if (upper.starts_with("AVX2")) return "avx2";
    return "";
  }
  return "";
}

}  // namespace repro_audit
