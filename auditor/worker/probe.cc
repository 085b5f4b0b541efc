#include "worker/probe.h"

#include <ATen/CPUGeneratorImpl.h>

namespace repro_audit {
namespace {

std::vector<ProbeDefinition>& registry() {
  static std::vector<ProbeDefinition> probes;
  return probes;
}

}  // namespace

ProbeContext::ProbeContext(const at::Device& device, std::uint64_t seed, std::string variant)
    : device_(device), variant_(std::move(variant)), generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

at::Tensor ProbeContext::randn(at::IntArrayRef sizes, at::ScalarType dtype) {
  return to_device(at::randn(sizes, generator_, at::TensorOptions().dtype(at::kFloat)).to(dtype));
}

at::Tensor ProbeContext::rand(at::IntArrayRef sizes, at::ScalarType dtype) {
  return to_device(at::rand(sizes, generator_, at::TensorOptions().dtype(at::kFloat)).to(dtype));
}

at::Tensor ProbeContext::randint(std::int64_t high, at::IntArrayRef sizes) {
  return to_device(at::randint(high, sizes, generator_, at::TensorOptions().dtype(at::kLong)));
}

at::Tensor gradient(const at::Tensor& output, const at::Tensor& input, const at::Tensor& grad_output) {
  return torch::autograd::grad({output}, {input}, {grad_output}, /*retain_graph=*/false)[0];
}

at::Tensor requiring_grad(const at::Tensor& tensor) { return tensor.detach().requires_grad_(true); }

bool register_probe(ProbeDefinition definition) {
  registry().push_back(std::move(definition));
  return true;
}

const std::vector<ProbeDefinition>& registered_probes() { return registry(); }

const ProbeDefinition* find_registered_probe(const std::string& name) {
  for (const auto& probe : registry())
    if (probe.info.name == name) return &probe;
  return nullptr;
}

Catalogue registered_catalogue() {
  Catalogue catalogue;
  for (const auto& probe : registry()) catalogue.push_back(probe.info);
  std::sort(catalogue.begin(), catalogue.end(), [](const ProbeInfo& a, const ProbeInfo& b) {
    return a.in_default_suite != b.in_default_suite ? a.in_default_suite : a.name < b.name;
  });
  return catalogue;
}

VariantInfo variant(std::string name, std::string description, std::map<std::string, Documented> documented) {
  return {std::move(name), std::move(description), {"cpu", "cuda"}, "", std::move(documented)};
}

VariantInfo cuda_variant(std::string name, std::string description, std::string reason,
                         std::map<std::string, Documented> documented) {
  return {std::move(name), std::move(description), {"cuda"}, std::move(reason), std::move(documented)};
}

at::ScalarType dtype_of_variant(const std::string& variant) {
  auto ends_with = [&](const std::string& suffix) {
    return variant.size() >= suffix.size() &&
           variant.compare(variant.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("bf16")) return at::kBFloat16;
  if (ends_with("f16")) return at::kHalf;
  if (ends_with("f64")) return at::kDouble;
  return at::kFloat;
}

}  // namespace repro_audit
