#include "hash/digest.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <fmt/format.h>

namespace repro_audit {
namespace {

std::string reference(const std::string& bytes) {
  const auto hash = XXH3_128bits(bytes.data(), bytes.size());
  return fmt::format("{:016x}{:016x}", hash.high64, hash.low64);
}

void append_u64(std::string& bytes, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

TEST(Digest, EqualsXxh3OverTheCanonicalBytes) {
  const float values[6] = {1.0f, -0.0f, 2.5f, 3.0f, -4.0f, 1e-30f};
  std::string canonical = std::string("Float") + '\0';
  append_u64(canonical, 2);
  append_u64(canonical, 2);
  append_u64(canonical, 3);
  canonical.append(reinterpret_cast<const char*>(values), sizeof values);
  EXPECT_EQ(digest_canonical("Float", {2, 3}, values, sizeof values), reference(canonical));
  EXPECT_EQ(digest_canonical("Float", {2, 3}, values, sizeof values).size(), 32u);
}

TEST(Digest, BitwiseShapeAndDtypeSensitive) {
  const float zero = 0.0f, negative_zero = -0.0f;
  EXPECT_NE(digest_canonical("Float", {1}, &zero, 4), digest_canonical("Float", {1}, &negative_zero, 4));
  const float four[4] = {1, 2, 3, 4};
  EXPECT_NE(digest_canonical("Float", {4}, four, 16), digest_canonical("Float", {2, 2}, four, 16));
  EXPECT_NE(digest_canonical("Float", {4}, four, 16), digest_canonical("Int", {4}, four, 16));
}

TEST(Digest, CombinedDigestDependsOnNamesAndOrder) {
  const auto a = combine_digests({{"output", "aa"}, {"grad_input", "bb"}});
  EXPECT_EQ(a, combine_digests({{"output", "aa"}, {"grad_input", "bb"}}));
  EXPECT_NE(a, combine_digests({{"grad_input", "bb"}, {"output", "aa"}}));
  EXPECT_NE(a, combine_digests({{"output", "aa"}, {"grad_input", "bc"}}));
  EXPECT_EQ(digest_text("abc"), reference("abc"));
}

}  // namespace
}  // namespace repro_audit
