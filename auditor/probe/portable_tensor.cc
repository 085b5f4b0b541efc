#include "probe/portable_tensor.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

namespace repro_audit {
namespace {

// Elements per task: the values do not depend on how the elements are shared out.
constexpr std::int64_t kGrain = 1 << 15;

template <typename Bits, typename Value>
void fill(at::Tensor& tensor, const Value& value_of) {
  auto* data = static_cast<Bits*>(tensor.data_ptr());
  at::parallel_for(0, tensor.numel(), kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) data[i] = static_cast<Bits>(value_of(static_cast<std::uint64_t>(i)));
  });
}

template <typename Bits>
void fill_floats(at::Tensor& tensor, PortableKind kind, FloatFormat format, Stream stream) {
  if (kind == PortableKind::spread)
    fill<Bits>(tensor, [&](std::uint64_t i) { return spread_value_bits(format, stream, i); });
  else
    fill<Bits>(tensor, [&](std::uint64_t i) { return unit_value_bits(format, stream, i); });
}

}  // namespace

at::Tensor portable_tensor(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                           std::int64_t low, std::int64_t high) {
  auto tensor = at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kCPU));
  if (kind == PortableKind::integer) {
    if (dtype != at::kLong) throw std::invalid_argument("portable integers are int64");
    if (high <= low) throw std::invalid_argument(fmt::format("an empty integer range [{}, {})", low, high));
    auto* data = tensor.data_ptr<std::int64_t>();
    at::parallel_for(0, tensor.numel(), kGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        data[i] = integer_value(stream, static_cast<std::uint64_t>(i), low, high);
    });
    return tensor;
  }
  switch (dtype) {
    case at::kHalf:
      fill_floats<std::uint16_t>(tensor, kind, kFloat16, stream);
      break;
    case at::kBFloat16:
      fill_floats<std::uint16_t>(tensor, kind, kBFloat16, stream);
      break;
    case at::kFloat:
      fill_floats<std::uint32_t>(tensor, kind, kFloat32, stream);
      break;
    case at::kDouble:
      fill_floats<std::uint64_t>(tensor, kind, kFloat64, stream);
      break;
    default:
      throw std::invalid_argument(fmt::format("portable floats have no dtype {}", c10::toString(dtype)));
  }
  return tensor;
}

}  // namespace repro_audit
