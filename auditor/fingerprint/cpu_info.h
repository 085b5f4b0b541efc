#pragma once
// What /proc/cpuinfo says about the CPU, and which ATen CPU capabilities it can run. Torch-free: the
// text is passed in, so any host can be described (and tested) from its cpuinfo alone.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace repro_audit {

struct CpuInfo {
  std::string vendor;                          // x86 vendor_id ("AuthenticAMD"); ARM "CPU implementer" ("0x41")
  std::string model_name;                      // x86 "model name"; empty when the kernel prints none (most ARM hosts)
  std::optional<int> family, model, stepping;  // ARM: CPU architecture, CPU part, CPU revision
  std::vector<std::string> flags;              // the present flags of numerics_cpu_flags(), sorted
  bool arm = false;                            // read from ARM's field names (Features, CPU part...)
};

// The flags that change which kernels run or how they round (fixed list; see the fingerprint format).
const std::vector<std::string>& numerics_cpu_flags();

// Parses the first processor block of /proc/cpuinfo text; missing fields stay empty.
CpuInfo parse_cpu_info(std::string_view cpuinfo_text);

// The text of /proc/cpuinfo; empty when it cannot be read (not Linux).
std::string read_proc_cpuinfo();

// The ATEN_CPU_CAPABILITY values a CPU with these flags can run, lowest first: "default", then
// "avx2" (avx2 + fma) and "avx512" (avx512f/vl/bw/dq + fma), ATen's own dispatch rule. ARM gets
// "default" only: sve256 also depends on the SVE vector length, which cpuinfo does not show.
std::vector<std::string> runnable_cpu_capabilities(const std::vector<std::string>& flags);

// at::get_cpu_capability()'s text ("NO AVX", "AVX2", "AVX512", "Z VECTOR", ...) as the upper-case
// ATEN_CPU_CAPABILITY name: "DEFAULT", "AVX2", "AVX512", "ZVECTOR", ... ("" for "").
std::string aten_capability_name(std::string_view printed);

}  // namespace repro_audit
