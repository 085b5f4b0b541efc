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

// "MKL keys on CPU id (AuthenticAMD ... -> GenuineIntel ...), CPU flags (-avx512_bf16), MKL (unchanged),
// env MKL_CBWR (unchanged)": the library's fields with what the environment diff says of each.
std::string keyed_on_text(const std::string& library, const std::vector<EnvironmentChange>& changes);

}  // namespace repro_audit
