// CUDA builds: a run's outputs are copied into pinned host memory on the current stream without
// blocking, with an event recorded after the copies; the digest waits on that event, by when the next
// run's kernels are already queued behind the copies.
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include "hash/tensor_digest.h"
#include "recording/digest_pipeline.h"

namespace repro_audit {
namespace {

class PinnedCopy : public HostCopy {
 public:
  PinnedCopy(std::vector<at::Tensor> host, std::vector<at::Tensor> sources)
      : host_(std::move(host)), sources_(std::move(sources)) {
    done_.record(c10::cuda::getCurrentCUDAStream());
  }
  std::vector<at::Tensor> wait() override {
    done_.synchronize();
    sources_.clear();  // the device tensors were kept alive until their copies were done
    return std::move(host_);
  }

 private:
  std::vector<at::Tensor> host_;
  std::vector<at::Tensor> sources_;
  at::cuda::CUDAEvent done_{cudaEventDisableTiming};
};

class PinnedCopier : public OutputCopier {
 public:
  std::unique_ptr<HostCopy> copy(const NamedTensors& outputs) override {
    std::vector<at::Tensor> host, sources;
    for (const auto& [_, tensor] : outputs) {
      // An output already on the host has nothing to overlap; a sparse, quantized or conjugate/negative
      // view output is copied as the canonical form keeps it (hash/tensor_digest.h), at once.
      if (!tensor.is_cuda() || tensor.layout() != at::kStrided || tensor.is_quantized() || tensor.is_conj() ||
          tensor.is_neg()) {
        host.push_back(canonical_tensor(tensor));
        continue;
      }
      auto source = tensor.detach().contiguous();
      auto pinned = at::empty(source.sizes(), source.options().device(at::kCPU).pinned_memory(true));
      pinned.copy_(source, /*non_blocking=*/true);
      host.push_back(pinned);
      sources.push_back(source);
    }
    return std::make_unique<PinnedCopy>(std::move(host), std::move(sources));
  }
  int depth() const override { return 1; }
};

}  // namespace

std::unique_ptr<OutputCopier> make_output_copier(const at::Device& device) {
  if (device.is_cuda()) return std::make_unique<PinnedCopier>();
  return std::make_unique<ImmediateCopier>();
}

}  // namespace repro_audit
