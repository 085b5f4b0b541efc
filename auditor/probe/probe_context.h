#pragma once
// What a probe sees: a context that builds seeded inputs (portable ones on the cell's device, others on
// the CPU, then moved there).
// A probe prepares its inputs once per cell and returns the op to run (probe/probe.h declares it).
#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/records.h"
#include "config/catalogue.h"
#include "config/input_scheme.h"

namespace repro_audit {

using Outputs = std::vector<std::pair<std::string, at::Tensor>>;
class RankGroup;
using RunFunction = std::function<Outputs()>;

// Thrown by a probe that has no implementation for the device or dtype at hand.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Random inputs a worker made, for the next cells of the same variant (the same op under other
// in-process flags): made from the same seed and place they are the same values, so the next cell
// takes them instead of making them again. An entry is found by what was asked (kind, sizes, dtype)
// and where: the draw's place and seed (portable scheme) or the generator's whole state before the
// draw (aten scheme, which then sets the state the draw left). It is handed out only while its digest
// is unchanged (a probe that changed its input in place made it another tensor).
class InputCache {
 public:
  struct Entry {
    std::string key;  // what was asked, and where (see above)
    at::Tensor tensor;
    std::string digest;      // of the tensor's canonical bytes when made
    at::Tensor state_after;  // aten scheme: the generator's state after the draw
  };
  Entry* find(const std::string& key);
  void keep(Entry entry);
  void clear() {
    entries_.clear();
    sensitivity.reset();
  }
  void note_hit() { ++hits_; }
  std::size_t hits() const { return hits_; }  // inputs handed out again

  // The variant's sensitivity check (probe/sensitivity.h), once measured: a property of its inputs,
  // the same for every cell of the variant. `second`: why it could not be measured.
  std::optional<std::pair<std::optional<Sensitivity>, std::string>> sensitivity;

 private:
  std::vector<Entry> entries_;
  std::size_t hits_ = 0;
};

// While one lives on this thread, probes make their inputs without trying their op (ProbeContext::runs_here,
// the invariance helpers' check for a missing kernel): an export (runners/input_export.h) makes a cell's
// inputs whatever the op can run here (a CUDA cell's fused attention on the CPU; on an AMX host, libtorch's
// bf16 attention under ATEN_CPU_CAPABILITY=avx2).
class OnlyInputs {
 public:
  OnlyInputs();
  ~OnlyInputs();
  OnlyInputs(const OnlyInputs&) = delete;
  OnlyInputs& operator=(const OnlyInputs&) = delete;
  static bool active();

 private:
  bool outer_;
};

class ProbeContext {
 public:
  // `cache`, when given, outlives the context: its inputs are shared with later cells (see InputCache).
  // `scheme`: how inputs are made from the seed (config/input_scheme.h); the audit's, or an older
  // file's to reproduce its inputs.
  ProbeContext(const at::Device& device, std::uint64_t seed, VariantInfo variant, InputCache* cache = nullptr,
               InputScheme scheme = kCurrentInputScheme);

  const std::string& variant() const { return variant_.name; }
  const at::Device& device() const { return device_; }
  // Whether the probe takes its CUDA shapes: on a CUDA device, or where the inputs of a CUDA cell are made
  // on the CPU (shapes_as_on: `repro`'s and parity's exports).
  bool on_cuda() const { return cuda_shapes_ || device_.is_cuda(); }
  void shapes_as_on(const at::Device& device) { cuda_shapes_ = device.is_cuda(); }
  // Whether the probe may try its op while it prepares (a backend check): not while an export makes only
  // the inputs (OnlyInputs below), where what the op can run here says nothing of the cell.
  bool runs_here() const;

  // The variant's typed parameters, as declared with Variant: its dtype (as torch's) and named values.
  // Asking for one the variant does not declare throws std::invalid_argument naming what it has.
  at::ScalarType dtype() const;
  const std::string& parameter(const std::string& name) const;
  // The parameter, or `fallback` when the variant does not declare it.
  std::string parameter_or(const std::string& name, const std::string& fallback) const;

  // Made from the seed: every device and process sees the same inputs, and under the portable scheme
  // every host too (inputs/portable_values.h), made on the device itself (probe/portable_tensor.h);
  // under the aten scheme made on the CPU, then moved.
  // Signed values with spread exponents (aten scheme: standard normal).
  at::Tensor randn(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat);
  // Uniform on [0, 1).
  at::Tensor rand(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat);
  // Integers uniform on [0, high), and on [low, high).
  at::Tensor randint(std::int64_t high, at::IntArrayRef sizes);
  at::Tensor randint(std::int64_t low, std::int64_t high, at::IntArrayRef sizes);
  // Spread values where a uniform draw falls below `density`, zero elsewhere: a sparse pattern.
  at::Tensor sparse_values(at::IntArrayRef sizes, double density, at::ScalarType dtype);
  at::Tensor to_device(const at::Tensor& cpu_tensor) const { return cpu_tensor.to(device_); }
  InputScheme scheme() const { return scheme_; }
  // A collective probe's ranks (ranks/rank_group.h); null outside a collective cell (the sensitivity
  // check, which computes the same result in one process).
  RankGroup* group() const { return group_; }
  void set_group(RankGroup* group) { group_ = group; }
  // Names a tensor the op reads, for the Python form of the probe (`repro` saves it, on the CPU, as
  // inputs.pt): every tensor the Python code uses must be named here. Returns `tensor`. Kept as it is,
  // on the context's device and sharing its storage (the sensitivity check changes it in place): a
  // worker's CUDA cell copies none of its inputs back to the CPU.
  const at::Tensor& input(const std::string& name, const at::Tensor& tensor);
  const std::vector<std::pair<std::string, at::Tensor>>& named_inputs() const { return named_; }
  // Digest of every input made through the methods above, in order. Under the aten scheme ATen's
  // random kernels are vectorised per CPU capability, so another capability can mean other inputs;
  // the two-bound randint and sparse_values are left out of it there, as before the scheme was recorded.
  std::string input_digest() const;

 private:
  at::Tensor made(const at::Tensor& tensor, std::string digest = "");
  // The cached draw for this request and place, or `draw()` kept for the next cell.
  at::Tensor drawn(const std::string& request, const std::function<at::Tensor()>& draw);
  // The portable scheme's next draw of `kind` ("spread", "unit", "integer [low, high)").
  at::Tensor portable(const std::string& kind, at::IntArrayRef sizes, at::ScalarType dtype, std::int64_t low = 0,
                      std::int64_t high = 0);
  std::uint64_t seed_;
  InputScheme scheme_;
  std::uint64_t draws_ = 0;  // portable draws made so far: the next one's stream
  InputCache* cache_;
  std::vector<std::pair<std::string, std::string>> inputs_;
  std::vector<std::pair<std::string, at::Tensor>> named_;
  at::Device device_;
  bool cuda_shapes_ = false;
  VariantInfo variant_;
  at::Generator generator_;
  RankGroup* group_ = nullptr;
};

// torch's scalar type for a catalogue dtype.
at::ScalarType scalar_type_of(DType dtype);

// d(output)/d(input) for a fixed upstream gradient, without touching .grad (runs stay independent).
at::Tensor gradient(const at::Tensor& output, const at::Tensor& input, const at::Tensor& grad_output);

// A leaf input that requires grad, seeded like any other input.
at::Tensor requiring_grad(const at::Tensor& tensor);

}  // namespace repro_audit
