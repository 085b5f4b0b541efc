#include "recording/digest_pipeline.h"

#include "hash/digest.h"
#include "hash/tensor_digest.h"

namespace repro_audit {
namespace {

class ReadyCopy : public HostCopy {
 public:
  explicit ReadyCopy(std::vector<at::Tensor> canonical) : canonical_(std::move(canonical)) {}
  std::vector<at::Tensor> wait() override { return std::move(canonical_); }

 private:
  std::vector<at::Tensor> canonical_;
};

}  // namespace

std::unique_ptr<HostCopy> ImmediateCopier::copy(const NamedTensors& outputs) {
  std::vector<at::Tensor> canonical;
  for (const auto& [_, tensor] : outputs) canonical.push_back(canonical_tensor(tensor));
  return std::make_unique<ReadyCopy>(std::move(canonical));
}

Digested digest_canonical_outputs(std::vector<std::string> names, std::vector<at::Tensor> canonical) {
  Digested result;
  for (std::size_t i = 0; i < canonical.size(); ++i)
    result.run.outputs.emplace_back(names[i], digest_tensor(canonical[i]));
  result.run.digest = combine_digests(result.run.outputs);
  result.canonical = std::move(canonical);
  result.names = std::move(names);
  return result;
}

}  // namespace repro_audit
