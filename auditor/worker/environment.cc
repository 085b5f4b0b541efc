#include "worker/environment.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <sys/utsname.h>
#include <torch/version.h>

#include <string>
#include <thread>

#include "common/version.h"
#include "fingerprint/cpu_info.h"

extern char** environ;

namespace repro_audit {

FingerprintInputs gather_fingerprint_inputs() {
  FingerprintInputs inputs;
  inputs.tool_version = kToolVersion;
  inputs.torch_version = TORCH_VERSION;
  inputs.torch_cuda_build = at::detail::getCUDAHooks().hasCUDART();
  inputs.cpuinfo = read_proc_cpuinfo();
  inputs.show_config = at::show_config();
  // at::native::get_cpu_capability() is not exported from libtorch; this exported wrapper returns
  // its value as text (the same text show_config prints).
  inputs.cpu_capability = at::get_cpu_capability();
  inputs.logical_cpus = std::thread::hardware_concurrency();
  inputs.threads = at::get_num_threads();
  inputs.interop_threads = at::get_num_interop_threads();
  inputs.environment = environment_variables(environ);
  utsname system{};
  if (uname(&system) == 0) {
    inputs.os = std::string(system.sysname) + " " + system.release;
    inputs.machine = system.machine;
  }
  inputs.gpu = cuda_environment();
  return inputs;
}

nlohmann::json environment_fingerprint() { return build_fingerprint(gather_fingerprint_inputs()); }

}  // namespace repro_audit
