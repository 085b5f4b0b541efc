// The portable input scheme's golden vectors: the first values of each kind, which every host must
// produce bit for bit (they were also computed by an independent implementation), and the properties
// the probes rely on.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "inputs/portable_values.h"

namespace repro_audit {
namespace {

std::vector<std::uint64_t> first(std::uint64_t (*kind)(FloatFormat, Stream, std::uint64_t), FloatFormat format,
                                 Stream stream, int count = 4) {
  std::vector<std::uint64_t> values;
  for (int i = 0; i < count; ++i) values.push_back(kind(format, stream, static_cast<std::uint64_t>(i)));
  return values;
}

using Bits = std::vector<std::uint64_t>;

TEST(PortableValues, CounterBitsAreTheGoldenVector) {
  EXPECT_EQ(counter_bits({0, 0}, 0), 0x9c8cb388e19b65a9ULL);
  EXPECT_EQ(counter_bits({0, 0}, 1), 0x048b0b3c0e65e1c9ULL);
  EXPECT_EQ(counter_bits({0, 0}, 2), 0x94d9f504fcd2e244ULL);
  EXPECT_EQ(counter_bits({0, 0}, 3), 0x4b6af43b77c0a4a1ULL);
  EXPECT_EQ(counter_bits({7, 3}, 0), 0xd7a6ef63d1e1a384ULL);
  EXPECT_EQ(counter_bits({7, 3}, 1), 0x6b7fbd2ea0f7c40aULL);
}

TEST(PortableValues, SpreadValuesAreTheGoldenVectorInEveryFormat) {
  // -0.08843994140625, 1.4462890625, -6.265625, 2.314453125
  EXPECT_EQ(first(spread_value_bits, kFloat16, {0, 0}), (Bits{0xada9, 0x3dc9, 0xc644, 0x40a1}));
  // -0.08251953125, 1.5703125, -6.125, 2.515625
  EXPECT_EQ(first(spread_value_bits, kBFloat16, {0, 0}), (Bits{0xbda9, 0x3fc9, 0xc0c4, 0x4021}));
  // -0.075877495, 1.7959529, -6.5901203, 3.010048
  EXPECT_EQ(first(spread_value_bits, kFloat32, {0, 0}), (Bits{0xbd9b65a9, 0x3fe5e1c9, 0xc0d2e244, 0x4040a4a1}));
  // -0.11211448200210462, 1.6902428209706264, -6.489276838656739, 3.3692540507950786
  EXPECT_EQ(first(spread_value_bits, kFloat64, {0, 0}),
            (Bits{0xbfbcb388e19b65a9, 0x3ffb0b3c0e65e1c9, 0xc019f504fcd2e244, 0x400af43b77c0a4a1}));
}

TEST(PortableValues, UnitValuesAreTheGoldenVectorInEveryFormat) {
  // 0.94580078125, 0.26220703125, 0.244140625, 0.08935546875
  EXPECT_EQ(first(unit_value_bits, kFloat16, {0, 1}), (Bits{0x3b91, 0x3432, 0x33d0, 0x2db8}));
  EXPECT_EQ(first(unit_value_bits, kBFloat16, {0, 1}), (Bits{0x3f72, 0x3e86, 0x3e78, 0x3db0}));
  EXPECT_EQ(first(unit_value_bits, kFloat32, {0, 1}), (Bits{0x3f72253e, 0x3e866fce, 0x3e7a2570, 0x3db7a450}));
  EXPECT_EQ(first(unit_value_bits, kFloat64, {0, 1}),
            (Bits{0x3fee44a7c6c0d417, 0x3fd0cdf9d9032348, 0x3fcf44ae3b01eaec, 0x3fb6f48ac6ba7768}));
}

TEST(PortableValues, IntegersAreTheGoldenVector) {
  std::vector<std::int64_t> values;
  for (std::uint64_t i = 0; i < 6; ++i) values.push_back(integer_value({0, 2}, i, 0, 1000));
  EXPECT_EQ(values, (std::vector<std::int64_t>{485, 383, 748, 153, 695, 705}));
  values.clear();
  for (std::uint64_t i = 0; i < 4; ++i) values.push_back(integer_value({5, 0}, i, 10, 31));
  EXPECT_EQ(values, (std::vector<std::int64_t>{18, 13, 26, 28}));
  EXPECT_THROW(integer_value({0, 0}, 0, 3, 3), std::invalid_argument);
}

// Mixed signs and every exponent of 2^-4 .. 2^2, in bfloat16's fields: what makes a sum of them
// depend on its order. Unit values stay on [0, 1).
TEST(PortableValues, SpreadValuesMixSignsAndExponentsAndUnitValuesStayBelowOne) {
  int negative = 0;
  std::set<int> exponents;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const auto bits = spread_value_bits(kBFloat16, {11, 4}, i);
    negative += (bits >> 15) & 1;
    exponents.insert(static_cast<int>((bits >> 7) & 0xff) - 127);
    const auto unit = unit_value_bits(kFloat32, {11, 4}, i);
    EXPECT_LT(unit, 0x3f800000u) << i;  // below 1.0f, and never negative
  }
  EXPECT_GT(negative, 1800);
  EXPECT_LT(negative, 2300);
  EXPECT_EQ(exponents, (std::set<int>{-4, -3, -2, -1, 0, 1, 2}));
}

TEST(PortableValues, StreamsAndSeedsGiveOtherValues) {
  EXPECT_NE(counter_bits({0, 0}, 0), counter_bits({0, 1}, 0));
  EXPECT_NE(counter_bits({0, 0}, 0), counter_bits({1, 0}, 0));
  EXPECT_NE(counter_bits({0, 1}, 0), counter_bits({1, 0}, 0));
}

TEST(PortableValues, FloatBitsRefusesAnExponentOutsideTheNormalRange) {
  EXPECT_EQ(float_bits(kFloat16, false, 0, 0), 0x3c00u);     // 1.0
  EXPECT_EQ(float_bits(kFloat32, true, 1, 0), 0xc0000000u);  // -2.0
  EXPECT_THROW(float_bits(kFloat16, false, 16, 0), std::invalid_argument);
  EXPECT_THROW(float_bits(kFloat16, false, -15, 0), std::invalid_argument);
}

}  // namespace
}  // namespace repro_audit
