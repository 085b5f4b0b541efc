#pragma once
// Which of a fingerprint's keys are its CUDA facts: `torch_cuda_build`, `cuda` and their sources (`cuda`,
// `cuda.NAME`). What the report completes a CPU worker's fingerprint with, and what is kept between audits.
#include <string>

namespace repro_audit {

inline bool is_cuda_fact_key(const std::string& key) {
  return key == "cuda" || key == "torch_cuda_build" || key.rfind("cuda.", 0) == 0;
}

}  // namespace repro_audit
