#include "hash/tensor_digest.h"

#include <cmath>
#include <cstring>

#include "hash/digest.h"

namespace repro_audit {
namespace {

// Maps a float's bit pattern onto integers that order like the floats, so the distance counts ULPs.
long double ordered(std::uint64_t bits, std::size_t size) {
  const std::uint64_t sign = std::uint64_t{1} << (8 * size - 1);
  const std::uint64_t magnitude = bits & (sign - 1);
  return (bits & sign) ? -static_cast<long double>(magnitude) : static_cast<long double>(magnitude);
}

std::uint64_t load(const unsigned char* p, std::size_t size) {
  std::uint64_t value = 0;
  std::memcpy(&value, p, size);  // little-endian hosts only, like the canonical form
  return value;
}

}  // namespace

at::Tensor canonical_tensor(const at::Tensor& tensor) {
  auto dense = tensor.is_sparse() ? tensor.to_dense() : tensor;
  return dense.detach().to(at::kCPU).contiguous();
}

std::string digest_tensor(const at::Tensor& tensor) {
  const auto cpu = canonical_tensor(tensor);
  return digest_canonical(c10::toString(cpu.scalar_type()), cpu.sizes().vec(), cpu.data_ptr(), cpu.nbytes());
}

Divergence compare_tensors(const std::string& output, int run, const at::Tensor& reference, const at::Tensor& other) {
  Divergence divergence{output, run, 0, reference.numel(), 0, 0};
  if (reference.sizes() != other.sizes() || reference.scalar_type() != other.scalar_type()) {
    divergence.differing_elements = reference.numel();
    divergence.max_abs_difference = INFINITY;
    divergence.max_ulp_difference = INFINITY;
    return divergence;
  }
  const auto size = reference.element_size();
  const bool floating = at::isFloatingType(reference.scalar_type());
  const auto* a = static_cast<const unsigned char*>(reference.data_ptr());
  const auto* b = static_cast<const unsigned char*>(other.data_ptr());
  const auto as_double_a = reference.to(at::kDouble).contiguous();
  const auto as_double_b = other.to(at::kDouble).contiguous();
  const auto* da = as_double_a.data_ptr<double>();
  const auto* db = as_double_b.data_ptr<double>();
  for (std::int64_t i = 0; i < reference.numel(); ++i) {
    if (std::memcmp(a + i * size, b + i * size, size) == 0) continue;
    ++divergence.differing_elements;
    const double abs_difference = std::fabs(da[i] - db[i]);
    if (!std::isnan(abs_difference))
      divergence.max_abs_difference = std::max(divergence.max_abs_difference, abs_difference);
    const long double ulps =
        floating ? std::fabs(ordered(load(a + i * size, size), size) - ordered(load(b + i * size, size), size))
                 : static_cast<long double>(abs_difference);
    divergence.max_ulp_difference = std::max(divergence.max_ulp_difference, static_cast<double>(ulps));
  }
  return divergence;
}

}  // namespace repro_audit
