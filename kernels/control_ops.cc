#include "control_ops.h"

#include "accumulate.h"
#include "busy_work.h"

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

// Row sums with `partials(rows)` interleaved partial sums per row, added in order at the end. Any
// device: the rows are summed on the CPU (the control checks the detector, not a backend).
template <std::int64_t (*partials)(std::int64_t)>
at::Tensor row_sum(const at::Tensor& rows_in) {
  TORCH_CHECK(rows_in.dim() == 2 && rows_in.scalar_type() == at::kFloat, "rows must be a 2-d float32 tensor");
  const auto rows = rows_in.cpu().contiguous();
  const auto count = rows.size(0), length = rows.size(1), parts = partials(count);
  auto output = at::empty({count}, rows.options());
  const float* in = rows.data_ptr<float>();
  float* out = output.data_ptr<float>();
  for (std::int64_t row = 0; row < count; ++row) {
    std::vector<float> partial(static_cast<std::size_t>(parts), 0.0f);
    for (std::int64_t k = 0; k < length; ++k) partial[static_cast<std::size_t>(k % parts)] += in[row * length + k];
    float total = 0.0f;
    for (const float value : partial) total += value;
    out[row] = total;
  }
  return output.to(rows_in.device());
}

// The timing control's work (kernels/busy_work.h); the output is the state after `keep_at` steps.
volatile std::uint64_t busy_sink = 0;  // the last state, so the compiler keeps every step

at::Tensor busy_work_cpu(const at::Tensor& like, std::int64_t iterations, std::int64_t keep_at) {
  std::uint64_t output = 0;
  busy_sink = busy_steps(iterations, keep_at, output);
  return at::full({1}, static_cast<std::int64_t>(output >> 1), like.options().dtype(at::kLong));
}

std::int64_t partials_by_batch(std::int64_t rows) { return rows < 4 ? 1 : rows < 16 ? 4 : 16; }
std::int64_t four_partials(std::int64_t) { return 4; }

}  // namespace

at::Tensor row_sum_by_batch(const at::Tensor& rows) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("control::row_sum_by_batch", "")
                       .typed<at::Tensor(const at::Tensor&)>();
  return op.call(rows);
}

at::Tensor row_sum_fixed(const at::Tensor& rows) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("control::row_sum_fixed", "")
                       .typed<at::Tensor(const at::Tensor&)>();
  return op.call(rows);
}

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

at::Tensor busy_work(const at::Tensor& like, std::int64_t iterations, std::int64_t keep_at) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("control::busy_work", "")
                       .typed<at::Tensor(const at::Tensor&, std::int64_t, std::int64_t)>();
  return op.call(like, iterations, keep_at);
}

TORCH_LIBRARY(control, m) {
  m.def("busy_work(Tensor like, int iterations, int keep_at) -> Tensor");
  m.def("racy_accumulate(Tensor values, Tensor index, int slots) -> Tensor");
  m.def("ordered_accumulate(Tensor values, Tensor index, int slots) -> Tensor");
  m.def("row_sum_by_batch(Tensor rows) -> Tensor");
  m.def("row_sum_fixed(Tensor rows) -> Tensor");
}

TORCH_LIBRARY_IMPL(control, CompositeExplicitAutograd, m) {
  m.impl("row_sum_by_batch", row_sum<partials_by_batch>);
  m.impl("row_sum_fixed", row_sum<four_partials>);
}

TORCH_LIBRARY_IMPL(control, CPU, m) {
  m.impl("racy_accumulate", racy_accumulate_cpu);
  m.impl("ordered_accumulate", ordered_accumulate_cpu);
  m.impl("busy_work", busy_work_cpu);
}

}  // namespace repro_audit
