#include "probe/probe.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/version.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "probe/portable_tensor.h"

namespace repro_audit {
namespace {

std::vector<ProbeDefinition>& registry() {
  static std::vector<ProbeDefinition> probes;
  return probes;
}

}  // namespace

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

at::Tensor ProbeContext::made(const at::Tensor& cpu_tensor, std::string digest) {
  inputs_.emplace_back(std::to_string(inputs_.size()), digest.empty() ? digest_tensor(cpu_tensor) : digest);
  return to_device(cpu_tensor);
}

at::Tensor ProbeContext::drawn(const std::string& request, const std::function<at::Tensor()>& draw) {
  if (!cache_) return made(draw());
  const bool aten = scheme_ == InputScheme::aten;
  const auto place =
      aten ? digest_tensor(generator_.get_state()) : fmt::format("portable seed {} draw {}", seed_, draws_);
  const auto key = request + " " + place;
  if (auto* entry = cache_->find(key)) {
    auto digest = digest_tensor(entry->tensor);
    if (digest == entry->digest) {
      if (aten)
        generator_.set_state(entry->state_after);
      else
        ++draws_;
      cache_->note_hit();
      return made(entry->tensor, std::move(digest));
    }
  }
  auto tensor = draw();
  auto digest = digest_tensor(tensor);
  cache_->keep({key, tensor, digest, aten ? generator_.get_state() : at::Tensor()});
  return made(tensor, std::move(digest));
}

at::Tensor ProbeContext::portable(const std::string& kind, at::IntArrayRef sizes, at::ScalarType dtype,
                                  std::int64_t low, std::int64_t high) {
  const Stream stream{seed_, draws_++};
  const auto portable_kind = kind == "unit"     ? PortableKind::unit
                             : kind == "spread" ? PortableKind::spread
                                                : PortableKind::integer;
  return portable_tensor(portable_kind, stream, sizes, dtype, low, high);
}

const at::Tensor& ProbeContext::input(const std::string& name, const at::Tensor& tensor) {
  for (const auto& [known, _] : named_)
    if (known == name) throw std::invalid_argument(fmt::format("input '{}' is named twice", name));
  named_.emplace_back(name, tensor.detach().to(at::kCPU));
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

Variant::Variant(std::string name, std::string description) {
  info_.name = std::move(name);
  info_.description = std::move(description);
  info_.devices = {"cpu", "cuda"};
}

Variant::Variant(DType dtype, std::string description)
    : Variant(to_string(dtype), description.empty() ? long_name(dtype) : std::move(description)) {
  info_.dtype = dtype;
}

Variant& Variant::expects_cost(double ratio) {
  info_.expected_cost = ratio;
  return *this;
}

Variant& Variant::sensitivity_floor(double fraction) {
  info_.sensitivity_floor = fraction;
  return *this;
}

Variant& Variant::insensitive_by_design(std::string reason) {
  info_.insensitive_reason = std::move(reason);
  return *this;
}

Variant& Variant::dtype(DType dtype) {
  info_.dtype = dtype;
  return *this;
}

Variant& Variant::parameter(std::string name, std::string value) {
  info_.parameters[std::move(name)] = std::move(value);
  return *this;
}

Variant& Variant::weight(double milliseconds) {
  info_.weight = milliseconds;
  return *this;
}

Variant& Variant::documented_before(std::string until, std::string device_kind, Documented documented,
                                    std::string source) {
  info_.documented_before.push_back({std::move(until), std::move(device_kind), documented, std::move(source)});
  return *this;
}

Variant& Variant::documented(std::map<std::string, Documented> documented) {
  info_.documented = std::move(documented);
  return *this;
}

Variant& Variant::default_suite_on(std::vector<std::string> device_kinds, std::string reason) {
  info_.default_suite_devices = std::move(device_kinds);
  info_.default_suite_reason = std::move(reason);
  return *this;
}

Variant& Variant::cuda_only(std::string reason) {
  info_.devices = {"cuda"};
  info_.unsupported_reason = std::move(reason);
  return *this;
}

ProbeBuilder::ProbeBuilder(std::string name) { definition_.info.name = std::move(name); }

ProbeBuilder& ProbeBuilder::describe(std::string description) {
  definition_.info.description = std::move(description);
  return *this;
}

ProbeBuilder& ProbeBuilder::variant(const Variant& variant) {
  definition_.info.variants.push_back(variant.info());
  return *this;
}

ProbeBuilder& ProbeBuilder::documented_before(std::string until, std::string device_kind, Documented documented,
                                              std::string source) {
  definition_.info.documented_before.push_back(
      {std::move(until), std::move(device_kind), documented, std::move(source)});
  return *this;
}

ProbeBuilder& ProbeBuilder::documented_as_cublas_product() {
  return documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
      .documented_before("2.10", "cuda", Documented::cublas_workspace,
                         "torch.use_deterministic_algorithms required CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 for "
                         "torch.mm, mv and bmm on CUDA up to 2.9; 2.10 removed the check and the paragraph "
                         "(pytorch#161749)");
}

ProbeBuilder& ProbeBuilder::documented(std::map<std::string, Documented> documented) {
  definition_.info.documented = std::move(documented);
  return *this;
}

ProbeBuilder& ProbeBuilder::timeout(double seconds) {
  definition_.info.timeout_seconds = seconds;
  return *this;
}

ProbeBuilder& ProbeBuilder::weight(double milliseconds) {
  definition_.info.weight = milliseconds;
  return *this;
}

ProbeBuilder& ProbeBuilder::control_expects(VerdictKind verdict) {
  definition_.info.control_expects = verdict;
  return *this;
}

ProbeBuilder& ProbeBuilder::on_request_only() {
  definition_.info.in_default_suite = false;
  return *this;
}

ProbeBuilder& ProbeBuilder::invariance(Invariance invariance) {
  definition_.info.invariance = invariance;
  return *this;
}

ProbeBuilder& ProbeBuilder::collective() {
  definition_.info.collective = true;
  return *this;
}

ProbeBuilder& ProbeBuilder::accumulates(std::string output, std::string operand, double floor) {
  auto& accumulation = definition_.info.accumulation;
  accumulation.output = std::move(output);
  accumulation.operand = std::move(operand);
  accumulation.floor = floor;
  return *this;
}

ProbeBuilder& ProbeBuilder::accumulation_unchecked(std::string reason) {
  definition_.info.accumulation.unchecked = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::prepare(PrepareFunction prepare) {
  definition_.prepare = std::move(prepare);
  return *this;
}

ProbeBuilder& ProbeBuilder::python(std::string code) {
  definition_.info.python.code = std::move(code);
  return *this;
}

ProbeBuilder& ProbeBuilder::no_python(std::string reason) {
  definition_.info.python.none_reason = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::python_differs(std::string reason) {
  definition_.info.python.differs_reason = std::move(reason);
  return *this;
}

ProbeBuilder& ProbeBuilder::python_path(std::string note, std::string check) {
  definition_.info.python.paths.push_back({std::move(note), std::move(check)});
  return *this;
}

ProbeDefinition ProbeBuilder::build() const {
  const auto& info = definition_.info;
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("probe '{}': {}", info.name, what));
  };
  if (info.name.empty()) fail("no name");
  if (info.variants.empty()) fail("no variant; add one with .variant(...)");
  if (!definition_.prepare) fail("no prepare function; add one with .prepare(...)");
  if (!(info.timeout_seconds > 0)) fail("the timeout must be positive");
  if (!(info.weight > 0)) fail("the weight must be positive");
  if (info.accumulation.checked() &&
      (info.accumulation.operand.empty() || !(info.accumulation.floor >= 0) || info.accumulation.floor > 1))
    fail("accumulates(...) needs an operand and a floor between 0 and 1");
  for (const auto& variant : info.variants)
    if (variant.weight && !(*variant.weight > 0))
      fail(fmt::format("variant '{}': the weight must be positive", variant.name));
  std::set<std::string> names;
  for (const auto& variant : info.variants)
    if (!names.insert(variant.name).second) fail(fmt::format("variant '{}' is declared twice", variant.name));
  if (info.python.code.empty() == info.python.none_reason.empty())
    fail("declare its Python form with .python(...), or why it has none with .no_python(...), not both");
  return definition_;
}

bool register_probe(const ProbeBuilder& probe) {
  auto definition = probe.build();
  if (find_registered_probe(definition.info.name))
    throw std::invalid_argument(fmt::format("probe '{}' is registered twice", definition.info.name));
  registry().push_back(std::move(definition));
  return true;
}

const std::vector<ProbeDefinition>& registered_probes() { return registry(); }

const ProbeDefinition* find_registered_probe(const std::string& name) {
  for (const auto& probe : registry())
    if (probe.info.name == name) return &probe;
  return nullptr;
}

Catalogue declared_catalogue() {
  Catalogue catalogue;
  for (const auto& probe : registry()) catalogue.push_back(probe.info);
  std::sort(catalogue.begin(), catalogue.end(), [](const ProbeInfo& a, const ProbeInfo& b) {
    return a.in_default_suite != b.in_default_suite ? a.in_default_suite : a.name < b.name;
  });
  return catalogue;
}

Catalogue registered_catalogue() {
  auto catalogue = declared_catalogue();
  // The torch this binary runs with: it was built against it, and a worker is this binary.
  resolve_documentation(catalogue, TORCH_VERSION);
  return catalogue;
}

DocumentationSource registered_documentation() {
  Catalogue none;
  return resolve_documentation(none, TORCH_VERSION);
}

}  // namespace repro_audit
