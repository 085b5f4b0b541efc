// The CPU's process group: c10d's ProcessGroupGloo, its devices bound to loopback only. The only file
// that includes gloo's headers (Debian's libgloo-dev; the library itself is inside libtorch_cpu).
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "ranks/c10d_group.h"
#include "ranks/process_groups.h"

namespace repro_audit {

std::unique_ptr<RankGroup> make_gloo_group(const RankGroupOptions& options) {
  auto store = c10::make_intrusive<c10d::FileStore>(options.store_path, options.size);
  store->setTimeout(options.timeout);
  auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
  gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  gloo->threads = 1;  // one collective at a time: every call is waited for
  auto backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store, options.rank, options.size, gloo);
  return make_c10d_group(std::move(backend), options.rank, options.size, options.device);
}

}  // namespace repro_audit
