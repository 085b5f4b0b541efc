#include "worker/environment.h"

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <sys/utsname.h>
#include <torch/version.h>

#include <fstream>
#include <string>
#include <thread>

#include "config/version.h"

namespace repro_audit {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

nlohmann::json environment_fingerprint() {
  utsname system{};
  uname(&system);
  const auto& cuda = at::detail::getCUDAHooks();
  nlohmann::json environment = {
      {"tool_version", kToolVersion},
      {"torch", TORCH_VERSION},
      {"torch_cuda_build", cuda.hasCUDART()},
      {"cpu", cpu_model()},
      {"logical_cpus", std::thread::hardware_concurrency()},
      {"threads", at::get_num_threads()},
      {"os", std::string(system.sysname) + " " + system.release},
      {"machine", system.machine},
      {"cuda", cuda_environment()},
  };
  return environment;
}

}  // namespace repro_audit
