#pragma once
// What a library's kernel choice keys on: the fingerprint fields (report/text_format.h labels) whose
// change can make it take another code path, and what pins it. For `explain`: when no knob
// reproduces the other side's bits, the kernels that changed and their library say where to look.
#include <string>
#include <vector>

#include "compare/kernel_change.h"
#include "compare/platform.h"

namespace repro_audit {

struct LibraryKeys {
  std::string library;              // kernel_library()'s name: "MKL", "oneDNN", ...
  std::vector<std::string> fields;  // fingerprint labels, e.g. "CPU id" (its vendor), "CPU flags", "MKL"
  std::string pin;                  // what holds its choice still across hosts
};

// The table's entry for a library; "other" for one it does not know.
const LibraryKeys& library_keys(const std::string& library);

// The settings that move a library's kernel choice: "oneDNN" -> onednn_max_cpu_isa, "MKL" ->
// mkl_enable_instructions and mkl_cbwr, "ATen" -> cpu_capability; none for the others.
std::vector<std::string> library_settings(const std::string& library);

// The value of an ISA setting that names the ISA in a kernel change's text: "jit:avx512_core_bf16"
// or oneDNN's banner "AVX2" -> onednn_max_cpu_isa "AVX512_CORE_BF16" / "AVX2"; MKL's code path
// "AVX-512 (DL Boost)" -> mkl_enable_instructions "AVX512"; "" when the text names none.
std::string isa_setting_value(const std::string& setting, const std::string& text);

// "MKL keys on CPU id (AuthenticAMD ... -> GenuineIntel ...), CPU flags (-avx512_bf16), MKL (unchanged),
// env MKL_CBWR (unchanged)": the library's fields with what the environment diff says of each.
std::string keyed_on_text(const std::string& library, const std::vector<EnvironmentChange>& changes);

}  // namespace repro_audit
