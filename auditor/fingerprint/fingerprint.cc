#include "fingerprint/fingerprint.h"

#include "fingerprint/build_info.h"
#include "fingerprint/cpu_info.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// Sets `key` (when `value` says something) and its source.
void put(json& fingerprint, const std::string& key, const json& value, const std::string& source) {
  if (value.is_null() || (value.is_string() && value.get<std::string>().empty())) return;
  fingerprint[key] = value;
  fingerprint["sources"][key] = source;
}

json optional_integer(const std::optional<int>& value) { return value ? json(*value) : json(); }

void put_cpu(json& fingerprint, const FingerprintInputs& inputs) {
  const auto cpu = parse_cpu_info(inputs.cpuinfo);
  const auto field = [&](const char* x86, const char* arm) {
    return std::string("/proc/cpuinfo (") + (cpu.arm ? arm : x86) + ")";
  };
  // Old fingerprints always had "cpu"; "unknown" keeps that when the kernel prints no model name.
  put(fingerprint, "cpu", cpu.model_name.empty() ? "unknown" : cpu.model_name, "/proc/cpuinfo (model name)");
  put(fingerprint, "cpu_vendor", cpu.vendor, field("vendor_id", "CPU implementer"));
  put(fingerprint, "cpu_family", optional_integer(cpu.family), field("cpu family", "CPU architecture"));
  put(fingerprint, "cpu_model", optional_integer(cpu.model), field("model", "CPU part"));
  put(fingerprint, "cpu_stepping", optional_integer(cpu.stepping), field("stepping", "CPU revision"));
  if (!inputs.cpuinfo.empty())
    put(fingerprint, "cpu_flags", cpu.flags, field("flags", "Features") + ", the flags that change kernels");
  put(fingerprint, "aten_cpu_capability", aten_capability_name(inputs.cpu_capability),
      "at::get_cpu_capability() (at::native::get_cpu_capability(); honours ATEN_CPU_CAPABILITY)");
  if (!inputs.cpuinfo.empty())
    put(fingerprint, "aten_cpu_capabilities", runnable_cpu_capabilities(cpu.flags),
        "ATen's dispatch rule applied to the /proc/cpuinfo flags");
}

void put_build(json& fingerprint, const FingerprintInputs& inputs) {
  const auto build = parse_build_info(inputs.show_config);
  put(fingerprint, "torch_git", build.torch_git, "at::show_config() (COMMIT_SHA)");
  put(fingerprint, "blas", build.blas, "at::show_config() (BLAS_INFO)");
  put(fingerprint, "mkl", build.mkl, "at::show_config() (Math Kernel Library Version)");
  put(fingerprint, "onednn", build.onednn, "at::show_config() (MKL-DNN version and git hash)");
  put(fingerprint, "openmp", build.openmp, "at::show_config() (OpenMP)");
}

}  // namespace

json build_fingerprint(const FingerprintInputs& inputs) {
  json fingerprint = {{"sources", json::object()}};
  put(fingerprint, "fingerprint", kFingerprintVersion, "the fingerprint format version");
  put(fingerprint, "tool_version", inputs.tool_version, "repro-audit's version");
  put(fingerprint, "torch", inputs.torch_version, "TORCH_VERSION (torch/version.h)");
  put(fingerprint, "torch_cuda_build", inputs.torch_cuda_build, "at::detail::getCUDAHooks().hasCUDART()");
  put_build(fingerprint, inputs);
  put_cpu(fingerprint, inputs);
  put(fingerprint, "logical_cpus", inputs.logical_cpus, "std::thread::hardware_concurrency()");
  put(fingerprint, "threads", inputs.threads, "at::get_num_threads()");
  put(fingerprint, "interop_threads", inputs.interop_threads, "at::get_num_interop_threads()");
  put(fingerprint, "os", inputs.os, "uname() (sysname, release)");
  put(fingerprint, "machine", inputs.machine, "uname() (machine)");
  // An empty object is a fact too: none of the variables is set (a consumer can tell "unset").
  fingerprint["numerics_environment"] = numerics_environment(inputs.environment);
  fingerprint["sources"]["numerics_environment"] =
      "the process environment, only the variables that change numerics or kernel choice";
  fingerprint["cuda"] = gpu_facts_json(inputs.gpu);
  add_gpu_sources(inputs.gpu, fingerprint["sources"]);
  return fingerprint;
}

}  // namespace repro_audit
