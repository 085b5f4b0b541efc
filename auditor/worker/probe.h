#pragma once
// What a probe sees: a context that builds seeded inputs on the CPU and moves them to the device.
// A probe prepares its inputs once per cell and returns the op to run; the runner owns the rest
// (sweeping, seeding, settings, digests, timing, tracing).
#include <torch/torch.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config/catalogue.h"

namespace repro_audit {

using Outputs = std::vector<std::pair<std::string, at::Tensor>>;
using RunFunction = std::function<Outputs()>;

// Thrown by a probe that has no implementation for the device or dtype at hand.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ProbeContext {
 public:
  ProbeContext(const at::Device& device, std::uint64_t seed, std::string variant);

  const std::string& variant() const { return variant_; }
  const at::Device& device() const { return device_; }
  bool on_cuda() const { return device_.is_cuda(); }

  // Seeded on the CPU, then moved: every device and process sees the same inputs.
  at::Tensor randn(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat);
  at::Tensor rand(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat);
  at::Tensor randint(std::int64_t high, at::IntArrayRef sizes);
  at::Tensor to_device(const at::Tensor& cpu_tensor) const { return cpu_tensor.to(device_); }
  at::Generator& generator() { return generator_; }

 private:
  at::Device device_;
  std::string variant_;
  at::Generator generator_;
};

struct ProbeDefinition {
  ProbeInfo info;
  std::function<RunFunction(ProbeContext&)> prepare;
};

// Called from a static initialiser in each probe file; probes live in an OBJECT library so the
// linker keeps them.
bool register_probe(ProbeDefinition definition);
const std::vector<ProbeDefinition>& registered_probes();
const ProbeDefinition* find_registered_probe(const std::string& name);
Catalogue registered_catalogue();

// Shorthand for variant tables: runs on both devices, declares what the probe declares.
VariantInfo variant(std::string name, std::string description, std::map<std::string, Documented> documented = {});
// A variant that exists only on CUDA (e.g. the cuDNN path), with the reason shown on other devices.
VariantInfo cuda_variant(std::string name, std::string description, std::string reason,
                         std::map<std::string, Documented> documented = {});

// d(output)/d(input) for a fixed upstream gradient, without touching .grad (runs stay independent).
at::Tensor gradient(const at::Tensor& output, const at::Tensor& input, const at::Tensor& grad_output);

// A leaf input that requires grad, seeded like any other input.
at::Tensor requiring_grad(const at::Tensor& tensor);

// Float dtype from a variant-name suffix: f16, bf16, f32, f64.
at::ScalarType dtype_of_variant(const std::string& variant);

}  // namespace repro_audit
