#include "inputs/portable_values.h"

#include <bit>
#include <stdexcept>

namespace repro_audit {

std::uint64_t stream_key(Stream stream) {
  return mix(stream.seed + kGolden) ^ mix(stream.stream * kGolden + 0x632be59bd9b4e019ULL);
}

std::uint64_t counter_bits(Stream stream, std::uint64_t index) { return keyed_bits(stream_key(stream), index); }

std::uint64_t float_bits(FloatFormat format, bool negative, int exponent, std::uint64_t fraction) {
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  if (exponent < 1 - bias || exponent > bias) throw std::invalid_argument("exponent outside the format's normal range");
  const auto biased = static_cast<std::uint64_t>(exponent + bias);
  const int width = 1 + format.exponent_bits + format.mantissa_bits;
  const std::uint64_t sign = negative ? std::uint64_t{1} << (width - 1) : 0;
  const std::uint64_t mantissa_mask = (std::uint64_t{1} << format.mantissa_bits) - 1;
  return sign | (biased << format.mantissa_bits) | (fraction & mantissa_mask);
}

std::uint64_t spread_value_bits(FloatFormat format, Stream stream, std::uint64_t index) {
  return spread_bits_of(format, counter_bits(stream, index));
}

std::uint64_t spread_bits_of(FloatFormat format, std::uint64_t bits) {
  // Low bits: the fraction; the top byte: sign and exponent (independent of the fraction's bits
  // for every format up to 52 fraction bits).
  const bool negative = (bits >> 63) != 0;
  const int exponent = kLowestExponent + static_cast<int>(((bits >> 56) & 0x7f) % kExponents);
  return float_bits(format, negative, exponent, bits);
}

std::uint64_t unit_value_bits(FloatFormat format, Stream stream, std::uint64_t index) {
  return unit_bits_of(format, counter_bits(stream, index));
}

std::uint64_t unit_bits_of(FloatFormat format, std::uint64_t bits) {
  const int digits = format.mantissa_bits + 1;
  const std::uint64_t m = bits >> (64 - digits);  // m / 2^digits in [0, 1)
  if (m == 0) return 0;
  const int top = std::bit_width(m) - 1;
  // m = 1.f * 2^top, so the value is 1.f * 2^(top - digits).
  const std::uint64_t fraction = (m << (format.mantissa_bits - top)) & ((std::uint64_t{1} << format.mantissa_bits) - 1);
  return float_bits(format, false, top - digits, fraction);
}

std::int64_t integer_value(Stream stream, std::uint64_t index, std::int64_t low, std::int64_t high) {
  if (high <= low) throw std::invalid_argument("an empty integer range");
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return low + static_cast<std::int64_t>(counter_bits(stream, index) % range);
}

}  // namespace repro_audit
