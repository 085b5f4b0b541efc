#include "ranks/c10d_group.h"

#include <utility>

namespace repro_audit {
namespace {

class C10dGroup : public RankGroup {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Backend> backend, int rank, int size, at::Device device)
      : backend_(std::move(backend)), rank_(rank), size_(size), device_(device) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  at::Device device() const override { return device_; }

  void all_reduce_sum(at::Tensor& tensor) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    backend_->allreduce(tensors, options)->wait();
  }

  void reduce_scatter_sum(at::Tensor& output, const at::Tensor& input) override {
    std::vector<at::Tensor> outputs{output};
    std::vector<std::vector<at::Tensor>> inputs(1);
    for (const auto& block : input.chunk(size_, 0)) inputs[0].push_back(block.contiguous());
    c10d::ReduceScatterOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    backend_->reduce_scatter(outputs, inputs, options)->wait();
  }

  void all_gather(std::vector<at::Tensor>& outputs, const at::Tensor& input) override {
    std::vector<std::vector<at::Tensor>> gathered{outputs};
    std::vector<at::Tensor> inputs{input};
    backend_->allgather(gathered, inputs)->wait();
    outputs = gathered[0];
  }

  void broadcast(at::Tensor& tensor, int root) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    backend_->broadcast(tensors, options)->wait();
  }

 private:
  c10::intrusive_ptr<c10d::Backend> backend_;
  int rank_;
  int size_;
  at::Device device_;
};

}  // namespace

std::unique_ptr<RankGroup> make_c10d_group(c10::intrusive_ptr<c10d::Backend> backend, int rank, int size,
                                           at::Device device) {
  return std::make_unique<C10dGroup>(std::move(backend), rank, size, device);
}

}  // namespace repro_audit
