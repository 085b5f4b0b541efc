// What a probe sees while it prepares its op: the context's seeded inputs, the inputs a variant's
// cells share, and the gradient helpers.
#include "probe/probe_context.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/phase_log.h"
#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "probe/portable_tensor.h"

namespace repro_audit {

InputCache::Entry* InputCache::find(const std::string& key) {
  for (auto& entry : entries_)
    if (entry.key == key) return &entry;
  return nullptr;
}

void InputCache::keep(Entry entry) {
  if (auto* known = find(entry.key)) {
    *known = std::move(entry);
    return;
  }
  entries_.push_back(std::move(entry));
}

namespace {
thread_local bool only_inputs = false;
}  // namespace

OnlyInputs::OnlyInputs() : outer_(only_inputs) { only_inputs = true; }
OnlyInputs::~OnlyInputs() { only_inputs = outer_; }
bool OnlyInputs::active() { return only_inputs; }

bool ProbeContext::runs_here() const { return !OnlyInputs::active(); }

ProbeContext::ProbeContext(const at::Device& device, std::uint64_t seed, VariantInfo variant, InputCache* cache,
                           InputScheme scheme)
    : seed_(seed),
      scheme_(scheme),
      cache_(cache),
      device_(device),
      variant_(std::move(variant)),
      generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

at::ScalarType ProbeContext::dtype() const {
  if (!variant_.dtype)
    throw std::invalid_argument(fmt::format(
        "variant '{}' declares no dtype; declare one with Variant::dtype() or Variant(DType::...)", variant_.name));
  return scalar_type_of(*variant_.dtype);
}

std::string ProbeContext::parameter_or(const std::string& name, const std::string& fallback) const {
  const auto it = variant_.parameters.find(name);
  return it != variant_.parameters.end() ? it->second : fallback;
}

const std::string& ProbeContext::parameter(const std::string& name) const {
  const auto it = variant_.parameters.find(name);
  if (it != variant_.parameters.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [declared, _] : variant_.parameters) names.push_back(declared);
  throw std::invalid_argument(fmt::format("variant '{}' has no parameter '{}'; its parameters: {}", variant_.name, name,
                                          names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

at::Tensor ProbeContext::made(const at::Tensor& tensor, std::string digest) {
  inputs_.emplace_back(std::to_string(inputs_.size()), digest.empty() ? digest_tensor(tensor) : digest);
  return to_device(tensor);
}

at::Tensor ProbeContext::drawn(const std::string& request, const std::function<at::Tensor()>& draw) {
  if (!cache_) return made(draw());
  const PhaseScope phase(Phase::inputs);
  const bool aten = scheme_ == InputScheme::aten;
  const auto place =
      aten ? digest_tensor(generator_.get_state()) : fmt::format("portable seed {} draw {}", seed_, draws_);
  const auto key = request + " " + place;
  if (auto* entry = cache_->find(key)) {
    // Kept on the device, it is handed out as a copy the cell cannot change; kept on the CPU, it is the
    // cell's own tensor (to_device copies nothing), handed out again only while its bits are as made.
    const bool on_device = !entry->tensor.device().is_cpu();
    auto digest = on_device ? entry->digest : digest_tensor(entry->tensor);
    if (digest == entry->digest) {
      if (aten)
        generator_.set_state(entry->state_after);
      else
        ++draws_;
      cache_->note_hit();
      return made(on_device ? entry->tensor.clone() : entry->tensor, std::move(digest));
    }
  }
  auto tensor = draw();
  auto digest = digest_tensor(tensor);
  // One made on the device stays there, and the cache keeps a copy of its own (see above).
  cache_->keep(
      {key, tensor.device().is_cpu() ? tensor : tensor.clone(), digest, aten ? generator_.get_state() : at::Tensor()});
  return made(tensor, std::move(digest));
}

at::Tensor ProbeContext::portable(const std::string& kind, at::IntArrayRef sizes, at::ScalarType dtype,
                                  std::int64_t low, std::int64_t high) {
  const Stream stream{seed_, draws_++};
  const auto portable_kind = kind == "unit"     ? PortableKind::unit
                             : kind == "spread" ? PortableKind::spread
                                                : PortableKind::integer;
  // Made where the cell runs: a device makes the same bits in a fraction of the time (probe/portable_tensor.h).
  return portable_tensor(portable_kind, stream, sizes, dtype, low, high, device_);
}

const at::Tensor& ProbeContext::input(const std::string& name, const at::Tensor& tensor) {
  for (const auto& [known, _] : named_)
    if (known == name) throw std::invalid_argument(fmt::format("input '{}' is named twice", name));
  named_.emplace_back(name, tensor.detach());
  return tensor;
}

std::string ProbeContext::input_digest() const { return inputs_.empty() ? "" : combine_digests(inputs_); }

at::Tensor ProbeContext::randn(at::IntArrayRef sizes, at::ScalarType dtype) {
  return drawn(fmt::format("randn {} {}", sizes, c10::toString(dtype)), [&] {
    if (scheme_ == InputScheme::portable) return portable("spread", sizes, dtype);
    return at::randn(sizes, generator_, at::TensorOptions().dtype(at::kFloat)).to(dtype);
  });
}

at::Tensor ProbeContext::rand(at::IntArrayRef sizes, at::ScalarType dtype) {
  return drawn(fmt::format("rand {} {}", sizes, c10::toString(dtype)), [&] {
    if (scheme_ == InputScheme::portable) return portable("unit", sizes, dtype);
    return at::rand(sizes, generator_, at::TensorOptions().dtype(at::kFloat)).to(dtype);
  });
}

at::Tensor ProbeContext::randint(std::int64_t high, at::IntArrayRef sizes) {
  return drawn(fmt::format("randint {} {}", high, sizes), [&] {
    if (scheme_ == InputScheme::portable) return portable("integer", sizes, at::kLong, 0, high);
    return at::randint(high, sizes, generator_, at::TensorOptions().dtype(at::kLong));
  });
}

at::Tensor ProbeContext::randint(std::int64_t low, std::int64_t high, at::IntArrayRef sizes) {
  if (scheme_ == InputScheme::aten) return to_device(at::randint(low, high, sizes, generator_, at::kLong));
  return drawn(fmt::format("randint {} {} {}", low, high, sizes),
               [&] { return portable("integer", sizes, at::kLong, low, high); });
}

at::Tensor ProbeContext::sparse_values(at::IntArrayRef sizes, double density, at::ScalarType dtype) {
  if (scheme_ == InputScheme::aten) {
    const auto mask = at::rand(sizes, generator_) < density;
    const auto values = at::randn(sizes, generator_).to(dtype);
    return to_device(values * mask.to(dtype));
  }
  const auto mask = rand(sizes, at::kFloat) < density;
  return randn(sizes, dtype) * mask.to(dtype);
}

at::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return at::kHalf;
    case DType::bf16:
      return at::kBFloat16;
    case DType::f32:
      return at::kFloat;
    case DType::f64:
      return at::kDouble;
  }
  throw std::invalid_argument("unknown dtype");
}

at::Tensor gradient(const at::Tensor& output, const at::Tensor& input, const at::Tensor& grad_output) {
  return torch::autograd::grad({output}, {input}, {grad_output}, /*retain_graph=*/false)[0];
}

at::Tensor requiring_grad(const at::Tensor& tensor) { return tensor.detach().requires_grad_(true); }

}  // namespace repro_audit
