// explain's candidates from the changed kernels' names, and its stages: the knobs the two sides point at
// first, the search stopping (and saying so) once they explain every changed cell.
#include <gtest/gtest.h>

#include "explain/explain.h"
#include "explain/library_keys.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

TEST(ExplainStages, KernelNamesSayWhichIsaToCapEachLibraryAt) {
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "jit:avx2"), "AVX2");
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "brg_matmul:avx512_core_bf16"), "AVX512_CORE_BF16");
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "jit:sse41"), "SSE41");
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "SSE4.1"), "SSE41");  // the banner's short form
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "AVX-512 (DL Boost)"), "AVX512_CORE_VNNI");
  EXPECT_EQ(isa_setting_value("onednn_max_cpu_isa", "jit:uni"), "");
  EXPECT_EQ(isa_setting_value("mkl_enable_instructions", "AVX-512 (DL Boost)"), "AVX512");
  EXPECT_EQ(isa_setting_value("mkl_enable_instructions", "generic x86-64"), "");
  EXPECT_EQ(library_settings("oneDNN"), std::vector<std::string>{"onednn_max_cpu_isa"});
  EXPECT_EQ(library_settings("MKL"), (std::vector<std::string>{"mkl_enable_instructions", "mkl_cbwr"}));
}

// A baseline from an AVX2 host, explained on an AVX-512 one: oneDNN's convolution went jit:avx2 ->
// jit:avx512_core. The first candidate is onednn_max_cpu_isa=AVX2, before any settings-table value.
TEST(ExplainStages, TheChangedKernelsNameTheFirstKnob) {
  const auto cell = cell_from_key("sum/f32@cpu", testing::test_catalogue());
  ASSERT_TRUE(cell);
  ExplainOptions options;
  options.runnable_capabilities = {"default", "avx2", "avx512"};
  const std::vector<KernelChange> changes = {{"oneDNN", "convolution", "jit:avx2", "jit:avx512_core"}};
  const auto knobs = candidate_knobs(*cell, nlohmann::json::object(), options, changes, "before");
  ASSERT_FALSE(knobs.empty());
  EXPECT_EQ(knobs[0].setting, "onednn_max_cpu_isa");
  EXPECT_EQ(knobs[0].value, "AVX2");
  EXPECT_EQ(knobs[0].rank, 0);
  EXPECT_NE(knobs[0].reason.find("oneDNN's kernels changed"), std::string::npos) << knobs[0].reason;
  // The setting's other values next, then the table; AFTER as the target takes AFTER's ISA.
  EXPECT_EQ(knobs[1].setting, "onednn_max_cpu_isa");
  EXPECT_EQ(knobs[1].rank, 1);
  EXPECT_EQ(knobs.back().rank, 2);
  EXPECT_EQ(candidate_knobs(*cell, nlohmann::json::object(), options, changes, "after")[0].value, "AVX512_CORE");
}

}  // namespace
}  // namespace repro_audit
