#include "control_ops.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <atomic>
#include <thread>
#include <vector>

namespace repro_audit {
namespace {

// More threads than this machine's cores, so the scheduler interleaves them differently each run.
constexpr int kRacyThreads = 4;

void check_inputs(const at::Tensor& values, const at::Tensor& index) {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == at::kFloat, "values must be a 1-d float32 tensor");
  TORCH_CHECK(index.dim() == 1 && index.scalar_type() == at::kLong && index.numel() == values.numel(),
              "index must be a 1-d int64 tensor as long as values");
}

// Checks the inputs, makes the output, and hands raw pointers to `add`, which does the summing.
template <typename Add>
at::Tensor accumulate(const at::Tensor& values_in, const at::Tensor& index_in, std::int64_t slots, Add add) {
  check_inputs(values_in, index_in);
  const auto values = values_in.contiguous();
  const auto index = index_in.contiguous();
  auto output = at::zeros({slots}, values.options());
  add(output.data_ptr<float>(), values.data_ptr<float>(), index.data_ptr<std::int64_t>(), values.numel());
  return output;
}

at::Tensor racy_accumulate_cpu(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  return accumulate(values, index, slots, [](float* out, const float* v, const std::int64_t* i, std::int64_t n) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kRacyThreads; ++t)
      threads.emplace_back([=] {
        for (std::int64_t k = t; k < n; k += kRacyThreads) std::atomic_ref<float>(out[i[k]]).fetch_add(v[k]);
      });
    for (auto& thread : threads) thread.join();
  });
}

at::Tensor ordered_accumulate_cpu(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  return accumulate(values, index, slots, [](float* out, const float* v, const std::int64_t* i, std::int64_t n) {
    for (std::int64_t k = 0; k < n; ++k) out[i[k]] += v[k];
  });
}

}  // namespace

at::Tensor racy_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("control::racy_accumulate", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t)>();
  return op.call(values, index, slots);
}

at::Tensor ordered_accumulate(const at::Tensor& values, const at::Tensor& index, std::int64_t slots) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("control::ordered_accumulate", "")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, std::int64_t)>();
  return op.call(values, index, slots);
}

TORCH_LIBRARY(control, m) {
  m.def("racy_accumulate(Tensor values, Tensor index, int slots) -> Tensor");
  m.def("ordered_accumulate(Tensor values, Tensor index, int slots) -> Tensor");
}

TORCH_LIBRARY_IMPL(control, CPU, m) {
  m.impl("racy_accumulate", racy_accumulate_cpu);
  m.impl("ordered_accumulate", ordered_accumulate_cpu);
}

}  // namespace repro_audit
