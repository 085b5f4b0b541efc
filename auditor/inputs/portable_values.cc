#include "inputs/portable_values.h"

#include <stdexcept>

namespace repro_audit {

std::uint64_t stream_key(Stream stream) {
  return mix(stream.seed + kGolden) ^ mix(stream.stream * kGolden + 0x632be59bd9b4e019ULL);
}

std::uint64_t counter_bits(Stream stream, std::uint64_t index) { return keyed_bits(stream_key(stream), index); }

std::uint64_t float_bits(FloatFormat format, bool negative, int exponent, std::uint64_t fraction) {
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  if (exponent < 1 - bias || exponent > bias) throw std::invalid_argument("exponent outside the format's normal range");
  return packed_float_bits(format, negative, exponent, fraction);
}

std::uint64_t spread_value_bits(FloatFormat format, Stream stream, std::uint64_t index) {
  return spread_bits_of(format, counter_bits(stream, index));
}

std::uint64_t unit_value_bits(FloatFormat format, Stream stream, std::uint64_t index) {
  return unit_bits_of(format, counter_bits(stream, index));
}

std::int64_t integer_value(Stream stream, std::uint64_t index, std::int64_t low, std::int64_t high) {
  if (high <= low) throw std::invalid_argument("an empty integer range");
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return low + static_cast<std::int64_t>(counter_bits(stream, index) % range);
}

}  // namespace repro_audit
