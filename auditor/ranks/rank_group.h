#pragma once
// The ranks of a collective cell as the probes see them: the collectives a probe calls, whatever
// carries them (c10d's gloo process group on the CPU, NCCL on CUDA; a test's fake). One rank of the
// group lives in each cooperating process.
#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace repro_audit {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Where its tensors live: the CPU for gloo, the rank's GPU for NCCL.
  virtual at::Device device() const = 0;
  // Every rank's `tensor` replaced by the elementwise sum over the ranks.
  virtual void all_reduce_sum(at::Tensor& tensor) = 0;
  // `input` holds size() equal blocks along dimension 0; rank r's `output` is the sum over the ranks
  // of block r.
  virtual void reduce_scatter_sum(at::Tensor& output, const at::Tensor& input) = 0;
  // `outputs[r]` is rank r's `input`, on every rank.
  virtual void all_gather(std::vector<at::Tensor>& outputs, const at::Tensor& input) = 0;
  // Every rank's `tensor` replaced by rank `root`'s.
  virtual void broadcast(at::Tensor& tensor, int root) = 0;
};

struct RankGroupOptions {
  int rank = 0;
  int size = 1;
  std::string store_path;                    // the file the ranks rendezvous through (c10d's FileStore): no port for it
  std::chrono::milliseconds timeout{30000};  // for the rendezvous and each collective
  at::Device device = at::kCPU;
};

// The rank's process group: gloo over loopback on the CPU, NCCL on CUDA (device index = rank).
// Throws Unsupported when this build has neither for the device.
std::unique_ptr<RankGroup> make_rank_group(const RankGroupOptions& options);

// The backend make_rank_group uses for a device kind ("gloo", "nccl"), "" when this build has none.
std::string collective_backend(const std::string& device_kind);

}  // namespace repro_audit
