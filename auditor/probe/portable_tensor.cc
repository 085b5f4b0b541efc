#include "probe/portable_tensor.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace repro_audit {
namespace {

// Elements per task: the values do not depend on how the elements are shared out.
constexpr std::int64_t kGrain = 1 << 15;

FloatFormat format_of(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
      return kFloat16;
    case at::kBFloat16:
      return kBFloat16;
    case at::kFloat:
      return kFloat32;
    case at::kDouble:
      return kFloat64;
    default:
      throw std::invalid_argument(fmt::format("portable floats have no dtype {}", c10::toString(dtype)));
  }
}

void check(PortableKind kind, at::ScalarType dtype, std::int64_t low, std::int64_t high) {
  if (kind != PortableKind::integer) {
    format_of(dtype);
    return;
  }
  if (dtype != at::kLong) throw std::invalid_argument("portable integers are int64");
  if (high <= low) throw std::invalid_argument(fmt::format("an empty integer range [{}, {})", low, high));
}

template <typename Bits, typename Value>
void fill(at::Tensor& tensor, const Value& value_of) {
  auto* data = static_cast<Bits*>(tensor.data_ptr());
  at::parallel_for(0, tensor.numel(), kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) data[i] = static_cast<Bits>(value_of(static_cast<std::uint64_t>(i)));
  });
}

template <typename Bits>
void fill_floats(at::Tensor& tensor, PortableKind kind, FloatFormat format, std::uint64_t key) {
  if (kind == PortableKind::spread)
    fill<Bits>(tensor, [format, key](std::uint64_t i) { return spread_bits_of(format, keyed_bits(key, i)); });
  else
    fill<Bits>(tensor, [format, key](std::uint64_t i) { return unit_bits_of(format, keyed_bits(key, i)); });
}

at::Tensor on_the_cpu(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype, std::int64_t low,
                      std::int64_t high) {
  auto tensor = at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kCPU));
  const auto key = stream_key(stream);
  if (kind == PortableKind::integer) {
    const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    fill<std::int64_t>(tensor, [&](std::uint64_t i) {
      return static_cast<std::uint64_t>(low) + keyed_bits(key, i) % range;  // wraps as integer_value does
    });
    return tensor;
  }
  const auto format = format_of(dtype);
  if (format.mantissa_bits == kFloat64.mantissa_bits)
    fill_floats<std::uint64_t>(tensor, kind, format, key);
  else if (format.mantissa_bits == kFloat32.mantissa_bits)
    fill_floats<std::uint32_t>(tensor, kind, format, key);
  else
    fill_floats<std::uint16_t>(tensor, kind, format, key);
  return tensor;
}

// The device's integer kernels on int64, whose multiply and shifts wrap as uint64's do.
constexpr std::int64_t as_signed(std::uint64_t bits) { return static_cast<std::int64_t>(bits); }

// x >> k as unsigned (a logical shift), 0 < k < 64.
at::Tensor shifted(const at::Tensor& x, int k) {
  return at::bitwise_right_shift(x, k).bitwise_and_(as_signed(~std::uint64_t{0} >> k));
}

void mix_(at::Tensor& x) {
  x.bitwise_xor_(shifted(x, 30)).mul_(as_signed(kMix1));
  x.bitwise_xor_(shifted(x, 27)).mul_(as_signed(kMix2));
  x.bitwise_xor_(shifted(x, 31));
}

// A w-bit pattern (0 <= p < 2^w, w = 16 or 32) as the w-bit signed integer with the same bits.
at::Tensor narrowed(const at::Tensor& pattern, int width, at::ScalarType integer) {
  return (pattern - at::bitwise_left_shift(shifted(pattern, width - 1), width)).to(integer);
}

at::Tensor float_patterns(const at::Tensor& bits, FloatFormat format, at::ScalarType dtype) {
  const int width = 1 + format.exponent_bits + format.mantissa_bits;
  const std::int64_t bias = (std::int64_t{1} << (format.exponent_bits - 1)) - 1;
  const auto exponent = at::remainder(shifted(bits, 56).bitwise_and_(0x7f), kExponents).add_(kLowestExponent + bias);
  auto pattern = at::bitwise_left_shift(exponent, format.mantissa_bits)
                     .bitwise_or_(bits.bitwise_and(as_signed((std::uint64_t{1} << format.mantissa_bits) - 1)))
                     .bitwise_or_(at::bitwise_left_shift(shifted(bits, 63), width - 1));
  if (width == 64) return pattern.view(dtype);
  return narrowed(pattern, width, width == 32 ? at::kInt : at::kShort).view(dtype);
}

}  // namespace

at::Tensor portable_tensor_by_kernels(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                                      std::int64_t low, std::int64_t high, const at::Device& device) {
  check(kind, dtype, low, high);
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  // Ranges past 2^62 would overflow the remainder's int64 steps below: made on the CPU and copied.
  if (kind == PortableKind::integer && range > (std::uint64_t{1} << 62))
    return on_the_cpu(kind, stream, sizes, dtype, low, high).to(device);
  std::int64_t count = 1;
  for (const auto size : sizes) count *= size;
  // keyed_bits: mix(key + (index + 1) * golden), index 0 .. count-1.
  auto bits = at::arange(1, count + 1, at::TensorOptions().dtype(at::kLong).device(device));
  bits.mul_(as_signed(kGolden)).add_(as_signed(stream_key(stream)));
  mix_(bits);
  at::Tensor values;
  if (kind == PortableKind::integer) {
    // The unsigned remainder in int64 steps: bits = 2 * half + low bit.
    auto remainder = at::remainder(shifted(bits, 1), as_signed(range)).mul_(2).add_(bits.bitwise_and(1));
    values = at::remainder(remainder, as_signed(range)).add_(low);
  } else if (kind == PortableKind::unit) {
    // m / 2^digits, with m < 2^digits <= 2^53: exact in a double, and exact again in the format.
    const int digits = format_of(dtype).mantissa_bits + 1;
    values = shifted(bits, 64 - digits).to(at::kDouble).mul_(std::ldexp(1.0, -digits)).to(dtype);
  } else {
    values = float_patterns(bits, format_of(dtype), dtype);
  }
  return values.reshape(sizes);
}

at::Tensor portable_tensor(PortableKind kind, Stream stream, at::IntArrayRef sizes, at::ScalarType dtype,
                           std::int64_t low, std::int64_t high, const at::Device& device) {
  check(kind, dtype, low, high);
  if (device.is_cpu()) return on_the_cpu(kind, stream, sizes, dtype, low, high);
  return portable_tensor_by_kernels(kind, stream, sizes, dtype, low, high, device);
}

}  // namespace repro_audit
