#include "ranks/collective_step.h"

#include <fmt/format.h>

#include "hash/tensor_digest.h"

namespace repro_audit {
namespace {

constexpr std::int64_t kDigestBytes = 16;  // XXH3-128

// The rank's digests of its outputs, as bytes: what travels to the other ranks.
at::Tensor digest_row(const Outputs& outputs, const at::Device& device) {
  auto row = at::empty({static_cast<std::int64_t>(outputs.size()) * kDigestBytes}, at::kByte);
  auto* bytes = row.data_ptr<std::uint8_t>();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto hex = digest_tensor(outputs[i].second);
    for (std::int64_t j = 0; j < kDigestBytes; ++j)
      bytes[static_cast<std::int64_t>(i) * kDigestBytes + j] =
          static_cast<std::uint8_t>(std::stoi(hex.substr(static_cast<std::size_t>(2 * j), 2), nullptr, 16));
  }
  return row.to(device);
}

std::vector<at::Tensor> gather_rows(RankGroup& group, const Outputs& outputs, const at::Device& device) {
  const auto row = digest_row(outputs, device);
  std::vector<at::Tensor> rows;
  for (int r = 0; r < group.size(); ++r) rows.push_back(at::empty_like(row));
  group.all_gather(rows, row);
  return rows;
}

bool next_run(RankGroup& group, const at::Device& device, bool go) {
  auto flag = at::full({1}, go ? 1 : 0, at::TensorOptions().dtype(at::kInt).device(device));
  group.broadcast(flag, 0);
  return flag.item<int>() == 1;
}

at::Device device_of(const Outputs& outputs) {
  return outputs.empty() ? at::Device(at::kCPU) : outputs.front().second.device();
}

}  // namespace

std::string rank_output_name(int rank) { return fmt::format("rank {}", rank); }

Outputs lead_run(RankGroup& group, const RunFunction& run) {
  next_run(group, group.device(), true);
  auto outputs = run();
  const auto rows = gather_rows(group, outputs, device_of(outputs));
  for (int r = 0; r < group.size(); ++r) outputs.emplace_back(rank_output_name(r), rows[static_cast<std::size_t>(r)]);
  return outputs;
}

void end_runs(RankGroup& group) { next_run(group, group.device(), false); }

bool follow_run(RankGroup& group, const RunFunction& run) {
  if (!next_run(group, group.device(), false)) return false;
  const auto outputs = run();
  gather_rows(group, outputs, device_of(outputs));
  return true;
}

}  // namespace repro_audit
