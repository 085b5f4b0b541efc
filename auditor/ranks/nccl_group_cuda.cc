// CUDA's process group: c10d's ProcessGroupNCCL, rank r on GPU r. Compiled with CUDA; nothing here
// runs on a machine without a GPU (make_rank_group sends the CPU to gloo).
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "probe/probe.h"
#include "ranks/c10d_group.h"
#include "ranks/process_groups.h"

namespace repro_audit {

std::unique_ptr<RankGroup> make_nccl_group(const RankGroupOptions& options) {
  const auto gpus = static_cast<int>(c10::cuda::device_count());
  if (options.size > gpus)
    throw Unsupported(
        fmt::format("{} ranks need {} GPUs, one per rank; this machine has {}", options.size, options.size, gpus));
  const auto device_index = static_cast<c10::DeviceIndex>(options.rank);
  c10::cuda::set_device(device_index);
  auto store = c10::make_intrusive<c10d::FileStore>(options.store_path, options.size);
  store->setTimeout(options.timeout);
  auto nccl = c10d::ProcessGroupNCCL::Options::create();
  nccl->timeout = options.timeout;
  auto backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, options.rank, options.size, nccl);
  return make_c10d_group(std::move(backend), options.rank, options.size, at::Device(at::kCUDA, device_index));
}

}  // namespace repro_audit
