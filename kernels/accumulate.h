#pragma once
// What the accumulating control ops share on every device: the inputs checked and made contiguous, the
// `slots` sums zeroed, and raw pointers handed to `add(out, values, index, n)`, which does the summing.
#include <ATen/ATen.h>

#include <cstdint>

namespace repro_audit {

inline void check_accumulate_inputs(const at::Tensor& values, const at::Tensor& index) {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == at::kFloat, "values must be a 1-d float32 tensor");
  TORCH_CHECK(index.dim() == 1 && index.scalar_type() == at::kLong && index.numel() == values.numel(),
              "index must be a 1-d int64 tensor as long as values");
}

template <typename Add>
at::Tensor accumulate(const at::Tensor& values_in, const at::Tensor& index_in, std::int64_t slots, Add add) {
  check_accumulate_inputs(values_in, index_in);
  const auto values = values_in.contiguous();
  const auto index = index_in.contiguous();
  auto output = at::zeros({slots}, values.options());
  add(output.data_ptr<float>(), values.data_ptr<float>(), index.data_ptr<std::int64_t>(), values.numel());
  return output;
}

}  // namespace repro_audit
