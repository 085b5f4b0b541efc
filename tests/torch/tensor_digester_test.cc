// Per-op digests taken where a tensor lies (recording/tensor_digester.h): tokens while a run records,
// digests when it ends. Here through the host digester, the device path's logic on real tensors (a
// recorder using it: op_recorder_test.cc); the CUDA kernel is checked against the same reference in the
// gpu tier.
#include "recording/tensor_digester.h"

#include <gtest/gtest.h>

#include "hash/tensor_digest.h"

namespace repro_audit {
namespace {

TEST(TensorDigester, ATokenBecomesTheWordSumsDigestOfTheStoredValues) {
  auto digester = make_host_tensor_digester();
  const auto x = torch::arange(24, torch::kFloat).reshape({4, 6});
  const auto token = digester->enqueue(x);
  EXPECT_TRUE(TensorDigester::has_token(token));
  EXPECT_EQ(digester->substitute(token), token);  // not read back yet
  digester->resolve();
  const auto digest = digester->substitute("a " + token + " b");
  const auto expected = word_sums_digest("Float", {4, 6}, 96, word_sums(x.data_ptr(), 96));
  EXPECT_EQ(digest, "a " + expected + " b");
  // Strides do not count: a transposed view is digested as its row-major copy.
  const auto view = x.t();
  EXPECT_EQ(digester->digest_now(view), digester->digest_now(view.contiguous()));
  // One element, the shape, the dtype, the view bits: each is another digest.
  auto changed = x.clone();
  changed[3][5] = std::nextafter(23.0f, 24.0f);
  const std::vector<std::string> digests = {
      expected, digester->digest_now(changed), digester->digest_now(x.reshape({6, 4})),
      digester->digest_now(x.view(torch::kInt)), digester->digest_now(x.to(torch::kComplexFloat).conj())};
  for (std::size_t i = 0; i < digests.size(); ++i)
    for (std::size_t j = i + 1; j < digests.size(); ++j) EXPECT_NE(digests[i], digests[j]) << i << " " << j;
}

TEST(TensorDigester, ANewRunStartsFromZeroedSlots) {
  auto digester = make_host_tensor_digester();
  const auto x = torch::randn({1000});
  const auto first = digester->digest_now(x);
  digester->clear();
  EXPECT_EQ(digester->digest_now(x), first);
  for (int i = 0; i < 5000; ++i) digester->enqueue(x);  // a second chunk of slots
  digester->resolve();
  digester->clear();
  EXPECT_EQ(digester->digest_now(x), first);
}

}  // namespace
}  // namespace repro_audit
