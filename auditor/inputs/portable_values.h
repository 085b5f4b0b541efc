#pragma once
// Probe inputs that are the same bits everywhere: element i of a stream is a pure function of
// (seed, stream, i) computed with 64-bit integer arithmetic only: no floating-point operation, no
// libm, no vector kernel, no dependence on the thread count or the order elements are made in.
//
// Floats are built from their fields, so every value is exactly representable in its format (f16
// and bf16 included) and converting it never rounds. "Spread" values have a random sign and an
// exponent spread over 2^-4 .. 2^2 (magnitudes 1/16 up to 8): sums of them round differently when
// their order changes, which is what an accumulation-order probe needs to see.
#include <bit>
#include <cstdint>

namespace repro_audit {

// An IEEE-754 binary format by its field widths.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;  // stored fraction bits (the leading 1 is implicit)
};
inline constexpr FloatFormat kFloat16{5, 10};
inline constexpr FloatFormat kBFloat16{8, 7};
inline constexpr FloatFormat kFloat32{8, 23};
inline constexpr FloatFormat kFloat64{11, 52};

// One draw's elements: the seed of the audit and the draw's place among the probe's draws.
struct Stream {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
};

// 64 random bits: element `index` of `stream` (a SplitMix64-style mix of the three numbers).
std::uint64_t counter_bits(Stream stream, std::uint64_t index);

// The same in two steps, for the many elements of one stream: the stream's key once, then
// counter_bits(stream, index) == keyed_bits(stream_key(stream), index). The constants are the ones a
// device's integer kernels use (probe/portable_tensor.h) to make the same bits there.
inline constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
inline constexpr std::uint64_t kMix1 = 0xbf58476d1ce4e5b9ULL;
inline constexpr std::uint64_t kMix2 = 0x94d049bb133111ebULL;
inline constexpr int kLowestExponent = -4;
inline constexpr int kExponents = 7;  // -4 .. 2
std::uint64_t stream_key(Stream stream);
// SplitMix64's finaliser: every input bit reaches every output bit.
inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= kMix1;
  x ^= x >> 27;
  x *= kMix2;
  x ^= x >> 31;
  return x;
}
inline std::uint64_t keyed_bits(std::uint64_t key, std::uint64_t index) { return mix(key + (index + 1) * kGolden); }

// The bit pattern (in the low bits) of (-1)^negative * 1.fraction * 2^exponent in `format`;
// `exponent` must be within the format's normal range, `fraction` below 2^mantissa_bits.
std::uint64_t float_bits(FloatFormat format, bool negative, int exponent, std::uint64_t fraction);

// A signed value with a spread exponent (see above), as `format`'s bit pattern.
std::uint64_t spread_value_bits(FloatFormat format, Stream stream, std::uint64_t index);

// A value uniform on [0, 1) on the grid of 2^-(mantissa_bits + 1), as `format`'s bit pattern.
std::uint64_t unit_value_bits(FloatFormat format, Stream stream, std::uint64_t index);

// An integer uniform on [low, high) (high > low): bits modulo the range (bias below 2^-32 for any
// range a probe uses).
std::int64_t integer_value(Stream stream, std::uint64_t index, std::int64_t low, std::int64_t high);

// float_bits without its range check, for exponents that are in every format's normal range by
// construction (the spread and unit values' below): inline, as a tensor's elements are made with it.
inline std::uint64_t packed_float_bits(FloatFormat format, bool negative, int exponent, std::uint64_t fraction) {
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const int width = 1 + format.exponent_bits + format.mantissa_bits;
  const std::uint64_t sign = negative ? std::uint64_t{1} << (width - 1) : 0;
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << format.mantissa_bits) - 1;
  return sign | (static_cast<std::uint64_t>(exponent + bias) << format.mantissa_bits) | (fraction & mantissa_mask);
}

// The spread and unit values from an element's 64 bits (keyed_bits): what a tensor's elements are made
// with. Spread: the low bits are the fraction, the top byte sign and exponent (independent of the
// fraction's bits for every format up to 52 fraction bits); its exponents -4 .. 2 fit f16's -14 .. 15.
inline std::uint64_t spread_bits_of(FloatFormat format, std::uint64_t bits) {
  const int exponent = kLowestExponent + static_cast<int>(((bits >> 56) & 0x7f) % kExponents);
  return packed_float_bits(format, (bits >> 63) != 0, exponent, bits);
}
// Unit: m / 2^digits in [0, 1) is 1.f * 2^(top - digits), top = m's highest bit, so its exponents are
// -digits .. -1: -11 .. -1 for f16, the narrowest range.
inline std::uint64_t unit_bits_of(FloatFormat format, std::uint64_t bits) {
  const int digits = format.mantissa_bits + 1;
  const std::uint64_t m = bits >> (64 - digits);
  if (m == 0) return 0;
  const int top = std::bit_width(m) - 1;
  const std::uint64_t fraction = (m << (format.mantissa_bits - top)) & ((std::uint64_t{1} << format.mantissa_bits) - 1);
  return packed_float_bits(format, false, top - digits, fraction);
}

}  // namespace repro_audit
