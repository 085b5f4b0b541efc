#pragma once
// What libtorch says it was built with, read from the text of at::show_config(). Torch-free: the
// text is passed in. A field the text does not mention stays empty (e.g. no MKL on ARM builds).
#include <map>
#include <string>
#include <string_view>

namespace repro_audit {

struct BuildInfo {
  std::string blas;                                   // BLAS_INFO: "mkl", "open", "accelerate", ...
  std::string mkl;                                    // "2024.2-Product Build 20240605"
  std::string onednn;                                 // "3.12.0 (80afa71049cd)": version and short git hash
  std::string openmp;                                 // "201511" (the _OPENMP date)
  std::string torch_git;                              // COMMIT_SHA
  std::string cpu_capability;                         // "CPU capability usage: X" as printed ("NO AVX", "AVX2", ...)
  std::map<std::string, std::string> build_settings;  // every KEY=VALUE of "Build settings:"
};

BuildInfo parse_build_info(std::string_view show_config_text);

}  // namespace repro_audit
