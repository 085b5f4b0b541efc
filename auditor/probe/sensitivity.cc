#include "probe/sensitivity.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "inputs/portable_values.h"
#include "probe/sensitivity_check.h"

namespace repro_audit {
namespace {

constexpr int kChunks = 4;
constexpr std::uint64_t kChunkStream = 0x5e45'1717'0000'0001ULL;

const at::Tensor& named(const std::vector<std::pair<std::string, at::Tensor>>& tensors, const std::string& name,
                        const char* what, const std::string& probe) {
  const auto found =
      std::find_if(tensors.begin(), tensors.end(), [&](const auto& entry) { return entry.first == name; });
  if (found == tensors.end())
    throw std::runtime_error(
        fmt::format("probe '{}' declares an accumulation in {} '{}', which it lacks", probe, what, name));
  return found->second;
}

// Elements of `a` and `b` (same shape and dtype) whose bits differ.
at::Tensor bits_differ(const at::Tensor& a, const at::Tensor& b) {
  if (!at::isFloatingType(a.scalar_type())) return a != b;
  const auto as_integers = [](const at::Tensor& t) {
    switch (t.element_size()) {
      case 2:
        return t.contiguous().view(at::kShort);
      case 4:
        return t.contiguous().view(at::kInt);
      default:
        return t.contiguous().view(at::kLong);
    }
  };
  return as_integers(a) != as_integers(b);
}

}  // namespace

std::optional<Sensitivity> measure_sensitivity(const ProbeDefinition& probe, const VariantInfo& variant,
                                               std::uint64_t seed, InputScheme scheme) {
  const auto& declared = probe.info.accumulation;
  if (!declared.checked()) return std::nullopt;
  if (std::find(variant.devices.begin(), variant.devices.end(), "cpu") == variant.devices.end())
    throw Unsupported(variant.unsupported_reason.empty() ? "no implementation on the CPU" : variant.unsupported_reason);
  ProbeContext context(at::kCPU, seed, variant, nullptr, scheme);
  const auto run = probe.prepare(context);
  const auto& name = probe.info.name;
  // The operand is changed in place, through an alias autograd does not track: the op's closure holds
  // the same storage.
  auto operand = named(context.named_inputs(), declared.operand, "input", name).detach();
  const auto original = operand.clone();
  const auto output = [&](const at::Tensor& mask) {
    operand.copy_(original * mask);
    return named(run(), declared.output, "output", name).detach().clone();
  };
  const auto reference = named(run(), declared.output, "output", name).detach().clone();

  // Each element of the operand is a contribution (or a factor of one), dealt to a chunk of its own.
  std::vector<std::int64_t> ids(static_cast<std::size_t>(operand.numel()));
  for (std::size_t j = 0; j < ids.size(); ++j)
    ids[j] = static_cast<std::int64_t>(counter_bits({seed, kChunkStream}, j) % kChunks);
  const auto chunks = at::tensor(ids, at::kLong).reshape(operand.sizes());
  if (output(at::zeros({}, operand.options())).ne(0).any().item<bool>())
    throw std::runtime_error(
        fmt::format("probe '{}': output '{}' is not a sum over input '{}' (it is not zero with every contribution "
                    "masked)",
                    name, declared.output, declared.operand));
  std::vector<at::Tensor> partials;
  for (std::int64_t k = 0; k < kChunks; ++k) partials.push_back(output(chunks == k));
  operand.copy_(original);
  const std::vector<at::Tensor> orders = {((partials[0] + partials[1]) + partials[2]) + partials[3],
                                          ((partials[3] + partials[2]) + partials[1]) + partials[0],
                                          (partials[0] + partials[2]) + (partials[1] + partials[3])};
  auto changed = at::zeros(reference.sizes(), at::kBool);
  for (const auto& order : orders) changed = changed | bits_differ(order, reference);

  Sensitivity sensitivity;
  sensitivity.output = declared.output;
  sensitivity.elements = reference.numel();
  sensitivity.changed = changed.sum().item<std::int64_t>();
  sensitivity.orders = static_cast<int>(orders.size());
  sensitivity.floor = variant.sensitivity_floor.value_or(declared.floor);
  return sensitivity;
}

}  // namespace repro_audit

namespace repro_audit {

// The variants are dealt in turn to the threads: the selftest's check of every default-suite variant took
// 21 s of one core on a 2-core host, 11 s on two.
std::vector<VariantSensitivity> check_sensitivities(const std::vector<std::string>& probes, std::uint64_t seed,
                                                    int threads) {
  std::vector<VariantSensitivity> results;
  std::vector<std::pair<const ProbeDefinition*, const VariantInfo*>> measured;  // parallel to results
  for (const auto& probe : registered_probes()) {
    const auto& info = probe.info;
    const bool named = std::find(probes.begin(), probes.end(), info.name) != probes.end();
    if (probes.empty() ? !(info.in_default_suite || info.control_expects) : !named) continue;
    if (info.invariance != Invariance::none) continue;
    if (!info.accumulation.checked() && info.accumulation.unchecked.empty()) continue;
    for (const auto& variant : info.variants) {
      results.push_back(
          {info.name, variant.name, std::nullopt, info.accumulation.unchecked, "", variant.insensitive_reason});
      measured.emplace_back(info.accumulation.checked() ? &probe : nullptr, &variant);
    }
  }
  const int threads_before = at::get_num_threads();
  std::atomic<std::size_t> next{0};
  const auto measure = [&] {
    at::set_num_threads(1);  // this thread's: OpenMP's and MKL's thread counts are per thread
    for (std::size_t i = next++; i < results.size(); i = next++) {
      const auto [probe, variant] = measured[i];
      if (probe) try {
          results[i].sensitivity = measure_sensitivity(*probe, *variant, seed, kCurrentInputScheme);
        } catch (const Unsupported& unsupported) {
          results[i].skipped = unsupported.what();
        } catch (const std::exception& error) {
          results[i].problem = error.what();
        }
    }
  };
  std::vector<std::thread> measuring;
  for (std::size_t k = 0; k < std::min<std::size_t>(std::clamp(threads, 1, 4), results.size()); ++k)
    measuring.emplace_back(measure);
  for (auto& thread : measuring) thread.join();
  at::set_num_threads(threads_before);  // the count later threads start from, as it was
  return results;
}

}  // namespace repro_audit
