#include "recording/tensor_digester.h"

#include <stdexcept>

#include "hash/tensor_digest.h"

namespace repro_audit {

TensorDigester::TensorDigester(at::Device device, WordSumsFunction reduce, std::function<void()> wait)
    : device_(device), reduce_(std::move(reduce)), wait_(std::move(wait)) {}

bool TensorDigester::defers(const at::Tensor& tensor) const {
  return tensor.defined() && tensor.layout() == at::kStrided && !tensor.is_quantized() && tensor.device() == device_ &&
         tensor.has_storage();
}

std::string TensorDigester::enqueue(const at::Tensor& tensor) {
  const auto index = static_cast<std::int64_t>(slots_.size());
  const auto chunk = index / kSlotsPerChunk;
  if (chunk == static_cast<std::int64_t>(chunks_.size()))
    chunks_.push_back(at::zeros({kSlotsPerChunk, 2}, at::TensorOptions().dtype(at::kLong).device(device_)));
  const auto values = stored_values(tensor.detach()).contiguous();  // row-major; the view bits are in the tag
  Slot slot{tensor_tag(tensor), tensor.sizes().vec(), values.nbytes(), ""};
  auto* sums = reinterpret_cast<std::uint64_t*>(chunks_[chunk].data_ptr<std::int64_t>()) + 2 * (index % kSlotsPerChunk);
  if (slot.bytes > 0) reduce_(values.data_ptr(), slot.bytes, sums);
  slots_.push_back(std::move(slot));
  return std::string(1, kTokenStart) + std::to_string(index) + kTokenEnd;
}

void TensorDigester::resolve() {
  if (resolved_ == slots_.size()) return;
  if (wait_) wait_();
  const auto first_chunk = static_cast<std::int64_t>(resolved_) / kSlotsPerChunk;
  for (auto chunk = first_chunk; chunk < static_cast<std::int64_t>(chunks_.size()); ++chunk) {
    const auto host = chunks_[chunk].to(at::kCPU);  // waits for the reductions queued before it
    const auto* words = reinterpret_cast<const std::uint64_t*>(host.data_ptr<std::int64_t>());
    const auto begin = std::max<std::size_t>(resolved_, chunk * kSlotsPerChunk);
    const auto end = std::min<std::size_t>(slots_.size(), (chunk + 1) * kSlotsPerChunk);
    for (auto i = begin; i < end; ++i) {
      const auto offset = 2 * (i % kSlotsPerChunk);
      auto& slot = slots_[i];
      slot.digest = word_sums_digest(slot.tag, slot.sizes, slot.bytes, {words[offset], words[offset + 1]});
    }
  }
  resolved_ = slots_.size();
}

std::string TensorDigester::substitute(const std::string& text) const {
  std::string result;
  std::size_t at = 0;
  while (true) {
    const auto start = text.find(kTokenStart, at);
    if (start == std::string::npos) break;
    const auto end = text.find(kTokenEnd, start);
    if (end == std::string::npos) break;
    result.append(text, at, start - at);
    const auto index = std::stoull(text.substr(start + 1, end - start - 1));
    if (index < resolved_)
      result += slots_[index].digest;
    else
      result.append(text, start, end - start + 1);
    at = end + 1;
  }
  return result.append(text, at, std::string::npos);
}

std::string TensorDigester::digest_now(const at::Tensor& tensor) {
  const auto token = enqueue(tensor);
  resolve();
  return substitute(token);
}

void TensorDigester::clear() {
  // Later slots' sums must start at zero: the chunks are zeroed after the reads of the last resolve.
  for (auto& chunk : chunks_) chunk.zero_();
  slots_.clear();
  resolved_ = 0;
}

std::unique_ptr<TensorDigester> make_host_tensor_digester() {
  return std::make_unique<TensorDigester>(at::Device(at::kCPU),
                                          [](const void* data, std::size_t bytes, std::uint64_t* sums) {
                                            const auto added = word_sums(data, bytes);
                                            sums[0] += added.a;
                                            sums[1] += added.b;
                                          });
}

}  // namespace repro_audit
