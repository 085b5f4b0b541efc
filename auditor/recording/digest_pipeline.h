#pragma once
// The digests of a cell's runs, in run order. On a GPU the digest of run i is taken while run i+1
// executes: right after run i its outputs are copied into pinned host memory on the run's stream
// (non-blocking), and the CPU hashes that copy once run i+1 has been launched. On the CPU each run is
// digested at once (depth 0). The device side is an interface, so the ordering is tested on the CPU
// with a fake stream.
#include <torch/types.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "verdict/observation.h"

namespace repro_audit {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// One run's outputs on their way to the host.
class HostCopy {
 public:
  virtual ~HostCopy() = default;
  // Blocks until the copies are complete; the outputs in canonical form (dense, contiguous, CPU).
  virtual std::vector<at::Tensor> wait() = 0;
};

class OutputCopier {
 public:
  virtual ~OutputCopier() = default;
  // Enqueues the copies after the work already on the stream; returns without waiting for them.
  virtual std::unique_ptr<HostCopy> copy(const NamedTensors& outputs) = 0;
  // How many later runs may be launched before a run's digest is taken: 0 or 1.
  virtual int depth() const = 0;
};

// Canonical copies made at once: the CPU's copier, and any device's where overlapping is off.
class ImmediateCopier : public OutputCopier {
 public:
  std::unique_ptr<HostCopy> copy(const NamedTensors& outputs) override;
  int depth() const override { return 0; }
};

// The copier for a device: pinned buffers and a CUDA event per run on a GPU (CUDA builds), else
// ImmediateCopier.
std::unique_ptr<OutputCopier> make_output_copier(const at::Device& device);

struct Digested {
  RunObservation run;  // digest per output and combined
  std::vector<at::Tensor> canonical;
  std::vector<std::string> names;
};

// Digests canonical tensors (named) as the report does.
Digested digest_canonical_outputs(std::vector<std::string> names, std::vector<at::Tensor> canonical);

// Runs submitted in order and collected in order. `Meta` travels with a run (its index, time, kernels).
template <typename Meta>
class DigestPipeline {
 public:
  explicit DigestPipeline(OutputCopier& copier, int depth) : copier_(copier), depth_(depth) {}
  int depth() const { return depth_; }
  // True when a run waits for its digest although this many later runs may be in flight.
  bool over_depth() const { return static_cast<int>(pending_.size()) > depth_; }
  // True when an earlier run waits: collect it after launching the next run, before waiting for it.
  bool has_pending() const { return !pending_.empty(); }
  void submit(const NamedTensors& outputs, Meta meta) {
    std::vector<std::string> names;
    for (const auto& [name, _] : outputs) names.push_back(name);
    pending_.push_back({std::move(meta), std::move(names), copier_.copy(outputs)});
  }
  // The oldest submitted run, digested.
  std::pair<Digested, Meta> collect() {
    auto next = std::move(pending_.front());
    pending_.pop_front();
    return {digest_canonical_outputs(std::move(next.names), next.copy->wait()), std::move(next.meta)};
  }

 private:
  struct Pending {
    Meta meta;
    std::vector<std::string> names;
    std::unique_ptr<HostCopy> copy;
  };
  OutputCopier& copier_;
  int depth_;
  std::deque<Pending> pending_;
};

}  // namespace repro_audit
