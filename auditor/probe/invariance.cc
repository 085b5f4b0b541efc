#include "probe/invariance.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace repro_audit {
namespace {

// Where the anchor goes in a batch of `size`: first, middle, last, without repeats.
std::vector<std::pair<const char*, std::int64_t>> offsets(std::int64_t size) {
  std::vector<std::pair<const char*, std::int64_t>> result = {{"first", 0}};
  if (size >= 3) result.emplace_back("middle", size / 2);
  if (size >= 2) result.emplace_back("last", size - 1);
  return result;
}

// The anchor at `offset` among size - 1 fillers, along `dim`.
at::Tensor place(const at::Tensor& anchor, const at::Tensor& filler, std::int64_t size, std::int64_t offset,
                 std::int64_t dim) {
  return at::cat({filler.narrow(dim, 0, offset), anchor, filler.narrow(dim, offset, size - 1 - offset)}, dim)
      .contiguous();
}

// A dtype the op has no kernel for on this device is a skipped cell, not an error: tried once here,
// outside the timed runs (not where only the inputs are wanted).
void check_supported(const std::function<void()>& call) {
  if (OnlyInputs::active()) return;
  try {
    call();
  } catch (const c10::NotImplementedError& error) {
    throw Unsupported(error.what_without_backtrace());
  } catch (const c10::Error& error) {
    const std::string text = error.what_without_backtrace();
    if (text.find("not implemented for") != std::string::npos) throw Unsupported(text);
    throw;
  }
}

}  // namespace

std::vector<std::int64_t> default_batch_sizes() { return {1, 2, 3, 7, 17, 33, 64, 128, 257, 1024}; }

std::vector<std::int64_t> batch_sizes_up_to(std::int64_t largest) {
  auto sizes = default_batch_sizes();
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](std::int64_t size) { return size > largest; }),
              sizes.end());
  return sizes;
}

RunFunction batch_invariance(const std::vector<at::Tensor>& anchors, const std::vector<at::Tensor>& fillers, BatchOp op,
                             const std::vector<std::int64_t>& sizes, std::int64_t dim) {
  if (anchors.empty() || anchors.size() != fillers.size())
    throw std::invalid_argument("batch_invariance: one filler per anchor, and at least one of each");
  const auto largest = *std::max_element(sizes.begin(), sizes.end());
  for (std::size_t i = 0; i < anchors.size(); ++i)
    if (anchors[i].size(dim) != 1 || fillers[i].size(dim) < largest - 1)
      throw std::invalid_argument(
          fmt::format("batch_invariance: input {} needs an anchor of size 1 and {} fillers "
                      "along dimension {}",
                      i, largest - 1, dim));
  struct Batch {
    std::string name;
    std::int64_t offset;
    std::vector<at::Tensor> inputs;
  };
  std::vector<Batch> batches;
  for (const auto size : sizes) {
    if (size < 2) continue;  // a batch of one is the reference itself
    for (const auto& [where, offset] : offsets(size)) {
      Batch batch{fmt::format("batch={}@{}", size, where), offset, {}};
      for (std::size_t i = 0; i < anchors.size(); ++i)
        batch.inputs.push_back(place(anchors[i], fillers[i], size, offset, dim));
      batches.push_back(std::move(batch));
    }
  }
  check_supported([&] { op(anchors); });
  return [=] {
    Outputs outputs{{kReferenceOutput, op(anchors)}};
    for (const auto& batch : batches) outputs.emplace_back(batch.name, op(batch.inputs).narrow(dim, batch.offset, 1));
    return outputs;
  };
}

std::vector<std::pair<std::string, at::Tensor>> other_layouts(const at::Tensor& input, bool channels_last) {
  std::vector<std::pair<std::string, at::Tensor>> layouts;
  const auto dims = input.dim();
  if (dims >= 2) layouts.emplace_back("transposed", input.transpose(-1, -2).contiguous().transpose(-1, -2));
  auto wider = input.sizes().vec();
  wider.back() *= 2;
  auto larger = at::zeros(wider, input.options());
  larger.slice(-1, 0, wider.back(), 2).copy_(input);
  layouts.emplace_back("strided-slice", larger.slice(-1, 0, wider.back(), 2));
  auto storage = at::zeros({input.numel() + 1}, input.options());
  auto offset = storage.narrow(0, 1, input.numel()).view(input.sizes());
  offset.copy_(input);
  layouts.emplace_back("storage-offset-1", offset);
  if (channels_last && dims == 4)
    layouts.emplace_back("channels-last", input.contiguous(at::MemoryFormat::ChannelsLast));
  return layouts;
}

RunFunction layout_invariance(const at::Tensor& input, std::function<at::Tensor(const at::Tensor&)> op,
                              bool channels_last) {
  const auto reference = input.contiguous();
  const auto layouts = other_layouts(reference, channels_last);
  check_supported([&] { op(reference); });
  return [=] {
    Outputs outputs{{kReferenceOutput, op(reference)}};
    for (const auto& [name, tensor] : layouts) outputs.emplace_back(name, op(tensor));
    return outputs;
  };
}

ProbeBuilder invariance_probe(std::string name, std::string description, Invariance invariance,
                              PrepareFunction prepare) {
  return ProbeBuilder(std::move(name))
      .describe(std::move(description))
      .invariance(invariance)
      .variant(Variant(DType::f32))
      .variant(Variant(DType::bf16))
      .variant(Variant(DType::f16))
      .timeout(600)
      .prepare(std::move(prepare));
}

}  // namespace repro_audit
