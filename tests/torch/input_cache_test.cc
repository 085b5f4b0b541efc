// A worker draws a variant's random inputs once: the next cells get the same values, the generator
// left where the draw left it, and an input changed in place is drawn again.
#include <gtest/gtest.h>

#include "probe/probe.h"

namespace repro_audit {
namespace {

VariantInfo f32() {
  VariantInfo variant;
  variant.name = "f32";
  return variant;
}

// What a probe's prepare does: several draws, the later ones from where the earlier left the generator.
std::vector<at::Tensor> draw(ProbeContext& context) {
  return {context.randn({1000, 3}), context.rand({17}, at::kDouble), context.randint(50, {64}),
          context.randn({1000, 3})};
}

class InputCacheOfScheme : public ::testing::TestWithParam<InputScheme> {};

TEST_P(InputCacheOfScheme, TheNextCellGetsTheSameInputsAndDigestWithoutDrawing) {
  const auto scheme = GetParam();
  InputCache cache;
  ProbeContext first(at::kCPU, 5, f32(), &cache, scheme);
  const auto made = draw(first);
  ProbeContext uncached(at::kCPU, 5, f32(), nullptr, scheme);
  const auto expected = draw(uncached);
  ProbeContext second(at::kCPU, 5, f32(), &cache, scheme);
  const auto again = draw(second);
  EXPECT_EQ(cache.hits(), 4u);
  for (std::size_t i = 0; i < made.size(); ++i) EXPECT_TRUE(at::equal(again[i], expected[i])) << i;
  EXPECT_EQ(second.input_digest(), uncached.input_digest());
  // The next draw is where drawing would have left it: a draw the cache never saw is still right.
  EXPECT_TRUE(at::equal(second.randn({8}), uncached.randn({8})));
  EXPECT_EQ(cache.hits(), 4u);
}

INSTANTIATE_TEST_SUITE_P(BothSchemes, InputCacheOfScheme, ::testing::Values(InputScheme::aten, InputScheme::portable),
                         [](const auto& info) { return info.param == InputScheme::aten ? "aten" : "portable"; });

TEST(InputCache, AnotherSeedOrShapeIsDrawnAfresh) {
  InputCache cache;
  ProbeContext first(at::kCPU, 5, f32(), &cache);
  draw(first);
  ProbeContext other_seed(at::kCPU, 6, f32(), &cache);
  ProbeContext fresh(at::kCPU, 6, f32());
  EXPECT_TRUE(at::equal(other_seed.randn({1000, 3}), fresh.randn({1000, 3})));
  ProbeContext other_shape(at::kCPU, 5, f32(), &cache);
  EXPECT_EQ(other_shape.randn({3, 1000}).sizes(), (std::vector<std::int64_t>{3, 1000}));
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(InputCache, AnInputChangedInPlaceIsDrawnAgain) {
  InputCache cache;
  ProbeContext first(at::kCPU, 5, f32(), &cache);
  auto input = first.randn({1000, 3});
  input.mul_(2);  // a probe that scales its input in place
  ProbeContext second(at::kCPU, 5, f32(), &cache);
  ProbeContext uncached(at::kCPU, 5, f32());
  EXPECT_TRUE(at::equal(second.randn({1000, 3}), uncached.randn({1000, 3})));
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(second.input_digest(), uncached.input_digest());
}

}  // namespace
}  // namespace repro_audit
