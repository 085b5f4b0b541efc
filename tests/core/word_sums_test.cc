// Word sums (hash/word_sums.h): the per-op digest of a tensor on a device, here through the host
// reference the device's kernel must equal.
#include "hash/word_sums.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

namespace repro_audit {
namespace {

std::vector<unsigned char> random_bytes(std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<unsigned char> bytes(count);
  for (auto& byte : bytes) byte = static_cast<unsigned char>(random());
  return bytes;
}

std::string digest_of(const std::vector<unsigned char>& bytes, const std::string& tag = "Float",
                      std::vector<std::int64_t> sizes = {}) {
  if (sizes.empty()) sizes = {static_cast<std::int64_t>(bytes.size() / 4)};
  return word_sums_digest(tag, sizes, bytes.size(), word_sums(bytes.data(), bytes.size()));
}

// The algorithm's bits are fixed: the float32 values 1, 2, 3 (12 bytes, a partial last word) have these
// sums here, on the device, and in the Python runner's own reference (python_runner.py).
TEST(WordSums, KnownValues) {
  const float values[] = {1.0f, 2.0f, 3.0f};
  const auto sums = word_sums(values, sizeof values);
  EXPECT_EQ(sums.a, 16849888655138122822ULL);
  EXPECT_EQ(sums.b, 17878053267960689354ULL);
}

// Every one of the 8 * 1,003 single-bit flips changes both sums: a difference in one word cannot cancel.
TEST(WordSums, EveryOneBitFlipChangesBothSums) {
  auto bytes = random_bytes(1003, 1);
  const auto original = word_sums(bytes.data(), bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= static_cast<unsigned char>(1u << bit);
      const auto flipped = word_sums(bytes.data(), bytes.size());
      bytes[i] ^= static_cast<unsigned char>(1u << bit);
      ASSERT_NE(flipped.a, original.a) << "byte " << i << " bit " << bit;
      ASSERT_NE(flipped.b, original.b) << "byte " << i << " bit " << bit;
    }
}

// Order counts: swapping two elements (in one word or in two), or rotating the whole, changes the digest.
TEST(WordSums, SwappedElementsDiffer) {
  const auto bytes = random_bytes(4096, 2);
  const auto original = digest_of(bytes);
  std::set<std::string> seen{original};
  for (const auto& [i, j] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 4}, {0, 8}, {100, 2048}, {4088, 4092}}) {
    auto swapped = bytes;
    for (int k = 0; k < 4; ++k) std::swap(swapped[i + k], swapped[j + k]);  // two float32 elements
    EXPECT_TRUE(seen.insert(digest_of(swapped)).second) << i << " <-> " << j;
  }
  auto rotated = bytes;
  std::rotate(rotated.begin(), rotated.begin() + 8, rotated.end());  // every word one place on
  EXPECT_TRUE(seen.insert(digest_of(rotated)).second);
}

// The same bytes under another shape or dtype, and zero bytes of another count, are other digests.
TEST(WordSums, ShapeDtypeAndLengthAreTheDigests) {
  const auto bytes = random_bytes(24, 3);
  const auto sums = word_sums(bytes.data(), bytes.size());
  std::set<std::string> seen;
  EXPECT_TRUE(seen.insert(word_sums_digest("Float", {2, 3}, 24, sums)).second);
  EXPECT_TRUE(seen.insert(word_sums_digest("Float", {3, 2}, 24, sums)).second);
  EXPECT_TRUE(seen.insert(word_sums_digest("Int", {2, 3}, 24, sums)).second);
  EXPECT_TRUE(seen.insert(word_sums_digest("Float;conj", {2, 3}, 24, sums)).second);
  // Zero bytes pad the last word: 5 and 6 zero bytes have equal sums, the byte count tells them apart.
  const std::vector<unsigned char> five(5, 0), six(6, 0);
  const auto five_sums = word_sums(five.data(), 5), six_sums = word_sums(six.data(), 6);
  EXPECT_EQ(five_sums.a, six_sums.a);
  EXPECT_NE(word_sums_digest("Byte", {5}, 5, five_sums), word_sums_digest("Byte", {6}, 6, six_sums));
  EXPECT_EQ(word_sums_digest("Float", {2, 3}, 24, sums), word_sums_digest("Float", {2, 3}, 24, sums));
}

// The sums of a whole are the sums of its parts, whatever the split: the property that lets a kernel
// reduce in any order and get the same bits.
TEST(WordSums, AnyOrderOfReductionGivesTheSameSums) {
  const auto bytes = random_bytes(8 * 1000, 4);
  const auto whole = word_sums(bytes.data(), bytes.size());
  std::uint64_t a = 0, b = 0;
  for (std::size_t word = 1000; word-- > 0;)
    word_sums_detail::add_word(
        [&] {
          std::uint64_t value;
          std::memcpy(&value, bytes.data() + 8 * word, 8);
          return value;
        }(),
        word, a, b);
  EXPECT_EQ(a, whole.a);
  EXPECT_EQ(b, whole.b);
}

}  // namespace
}  // namespace repro_audit
