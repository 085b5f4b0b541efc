// Kernel changes said by name, on records as the tracers write them: the MKL and oneDNN lines are
// those of tests/core/fixtures/library_verbose after the parser, the CUDA names CUPTI's.
#include "compare/kernel_change.h"

#include <gtest/gtest.h>

#include "sample_reports.h"

namespace repro_audit {
namespace {

std::vector<KernelRecord> records(const std::vector<std::string>& names) {
  std::vector<KernelRecord> result;
  for (const auto& name : names) result.push_back({name, "", ""});
  return result;
}

std::vector<std::string> texts(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  std::vector<std::string> result;
  for (const auto& change : describe_kernel_changes(records(before), records(after)))
    result.push_back(kernel_change_text(change));
  return result;
}

const std::string kSgemm = "mkl:SGEMM(N,N,512,512,512,*,*,512,*,512,*,*,512)";
const std::string kConvolution =
    " forward_training src:bf16 wei:bf16 dst:bf16 alg:convolution_direct "
    "mb8_ic32oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1";

TEST(KernelChange, ShortIsaNamesTheIsaAndItsExtensions) {
  EXPECT_EQ(short_isa(testing::mkl_banner(false)), "AVX2");
  EXPECT_EQ(short_isa(testing::mkl_banner(true)), "AVX-512 (DL Boost)");
  EXPECT_EQ(short_isa("Intel(R) Advanced Vector Extensions 512 (Intel(R) AVX-512) with support for INT8, BF16, FP16 "
                      "(limited) instructions, and Intel(R) Advanced Matrix Extensions (Intel(R) AMX) with INT8 and "
                      "BF16"),
            "AVX-512 (AMX, INT8, BF16, FP16)");
  EXPECT_EQ(short_isa("Intel AVX-512 with Intel DL Boost and bfloat16 support"), "AVX-512 (DL Boost, BF16)");
  EXPECT_EQ(short_isa("Intel AVX-512 with float16, Intel DL Boost and bfloat16 support"),
            "AVX-512 (DL Boost, BF16, FP16)");
  EXPECT_EQ(short_isa("Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions"), "AVX-512");
  EXPECT_EQ(short_isa("Intel(R) Streaming SIMD Extensions 4.2 (Intel(R) SSE4.2)"), "SSE4.2");
  // The banner of MKL on a processor it does not dispatch for by ISA (the AMD host of the fixtures).
  EXPECT_EQ(short_isa("Intel(R) 64 architecture Intel(R) Architecture"), "generic x86-64");
}

TEST(KernelChange, MklBannerGivesTheCodePathAndTheVersion) {
  EXPECT_EQ(texts(testing::mkl_sgemm_kernels(false), testing::mkl_sgemm_kernels(true)),
            std::vector<std::string>{"MKL code path AVX2 -> AVX-512 (DL Boost)"});
  auto newer = testing::mkl_sgemm_kernels(false);
  newer[0].replace(newer[0].find("2024.0 Update 2"), 15, "2025.0");
  const auto changes = describe_kernel_changes(records(testing::mkl_sgemm_kernels(true)), records(newer));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].library, "MKL");
  EXPECT_EQ(changes[0].aspect, "code path");
  EXPECT_EQ(changes[0].before, "AVX-512 (DL Boost)");
  EXPECT_EQ(changes[0].after, "AVX2");
  EXPECT_EQ(kernel_change_text(changes[1]), "MKL version 2024.0 Update 2 -> 2025.0");
  // Another threading layer, the ISA and version alike.
  auto threaded = testing::mkl_sgemm_kernels(false);
  threaded[0].replace(threaded[0].find("gnu_thread"), 10, "intel_thread");
  EXPECT_EQ(texts(testing::mkl_sgemm_kernels(false), threaded),
            std::vector<std::string>{"MKL build Lnx lp64 gnu_thread -> Lnx lp64 intel_thread"});
}

TEST(KernelChange, MklCallsGiveTheirModeAndThreadCount) {
  const auto banner = testing::mkl_banner(true);
  EXPECT_EQ(texts({banner, kSgemm + " CNR:OFF NThr:2", kSgemm + " CNR:OFF NThr:2"},
                  {banner, kSgemm + " CNR:COMPATIBLE NThr:1", kSgemm + " CNR:COMPATIBLE NThr:1"}),
            (std::vector<std::string>{"MKL SGEMM CNR:OFF -> CNR:COMPATIBLE (2 records)",
                                      "MKL SGEMM threads 2 -> 1 (2 records)"}));
  // Another call: nothing to pair it with but its place.
  EXPECT_EQ(texts({banner, kSgemm + " CNR:OFF NThr:2"},
                  {banner, "mkl:DGEMM(N,N,64,64,64,*,*,64,*,64,*,*,64) CNR:OFF NThr:2"}),
            std::vector<std::string>{"MKL kernel " + kSgemm +
                                     " CNR:OFF NThr:2 -> mkl:DGEMM(N,N,64,64,64,*,*,64,*,64,*,*,64) "
                                     "CNR:OFF NThr:2 (1 added, 1 removed)"});
}

TEST(KernelChange, OneDnnGivesItsIsaVersionAndImplementations) {
  EXPECT_EQ(texts(testing::onednn_convolution_kernels(true), testing::onednn_convolution_kernels(false)),
            (std::vector<std::string>{"oneDNN isa AVX-512 (DL Boost, BF16) -> AVX2",
                                      "oneDNN convolution jit:avx512_core -> jit:avx2"}));
  const std::string banner = "onednn:oneDNN v3.12.0 isa:Intel AVX-512 with Intel DL Boost and bfloat16 support";
  const std::string newer = "onednn:oneDNN v3.13.1 isa:Intel AVX-512 with Intel DL Boost and bfloat16 support";
  const auto changes =
      describe_kernel_changes(records({banner, "onednn:convolution jit_bf16:avx512_core_bf16" + kConvolution,
                                       "onednn:reorder jit:blk src:f32 dst:f32 8x32x32x32",
                                       "onednn:convolution jit_bf16:avx512_core_bf16" + kConvolution}),
                              records({newer, "onednn:convolution brg_conv_fwd:avx512_core" + kConvolution,
                                       "onednn:reorder jit:blk src:f32 dst:f32 8x32x32x32",
                                       "onednn:convolution brg_conv_fwd:avx512_core" + kConvolution}));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(kernel_change_text(changes[0]), "oneDNN version v3.12.0 -> v3.13.1");
  EXPECT_EQ(changes[1].library, "oneDNN");
  EXPECT_EQ(changes[1].aspect, "convolution");
  EXPECT_EQ(changes[1].before, "jit_bf16:avx512_core_bf16");
  EXPECT_EQ(changes[1].after, "brg_conv_fwd:avx512_core");
  EXPECT_EQ(changes[1].records, 2);
  EXPECT_EQ(kernel_change_text(changes[1]),
            "oneDNN convolution jit_bf16:avx512_core_bf16 -> brg_conv_fwd:avx512_core (2 records)");
}

TEST(KernelChange, CudaNamesAreGroupedByTheLibraryTheirNameSuggests) {
  EXPECT_EQ(kernel_library("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
                           "segment_k_off_kernel__5x_cublas"),
            "cuBLAS");
  EXPECT_EQ(kernel_library("ampere_sgemm_128x64_tn"), "cuBLAS");
  EXPECT_EQ(kernel_library("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN"), "cuBLAS");
  EXPECT_EQ(kernel_library("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(...)"), "cuBLASLt");
  EXPECT_EQ(kernel_library("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16"),
            "cuDNN");
  EXPECT_EQ(kernel_library("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>()"),
            "cuDNN");
  EXPECT_EQ(kernel_library("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4"), "CUTLASS");
  EXPECT_EQ(kernel_library("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(...)"), "ATen");
  EXPECT_EQ(kernel_library("aten::index_put_"), "ATen");
  EXPECT_EQ(kernel_library("void flat::kernel<float>()"), "other");
  EXPECT_EQ(kernel_library("mkl:SGEMM(N,N)"), "MKL");
  EXPECT_EQ(kernel_library("onednn:reorder jit:uni"), "oneDNN");
}

TEST(KernelChange, CudaKernelsGiveTheFirstDifferingOneAndTheCounts) {
  const std::string reduce = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(...)";
  const std::vector<KernelRecord> before = {{reduce, "128,1,1", "512,1,1"},
                                            {"sm80_xmma_gemm_f32f32_tn_n_tilesize128x128x16", "64,2,1", "128,1,1"}};
  const std::vector<KernelRecord> after = {
      {reduce, "128,1,1", "512,1,1"},
      {"sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x32", "66,1,1", "384,1,1"},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(...)", "8,1,1", "32,8,1"}};
  const auto changes = describe_kernel_changes(before, after);
  ASSERT_EQ(changes.size(), 2u);  // ATen ran the same reduction
  EXPECT_EQ(changes[0].library, "cuBLAS");
  EXPECT_EQ(changes[0].aspect, "kernel");
  EXPECT_EQ(kernel_change_text(changes[0]),
            "cuBLAS kernel sm80_xmma_gemm_f32f32_tn_n_tilesize128x128x16 grid 64,2,1 block 128,1,1 -> "
            "sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x32 grid 66,1,1 block 384,1,1 (1 added, 1 removed)");
  EXPECT_EQ(kernel_change_text(changes[1]),
            "cuBLASLt kernel none -> void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(...) grid "
            "8,1,1 block 32,8,1 (1 added)");
  // Another launch of the same kernel.
  auto relaunched = before;
  relaunched[0].grid = "64,1,1";
  EXPECT_EQ(kernel_change_text(describe_kernel_changes(before, relaunched).at(0)),
            "ATen kernel " + reduce + " grid 128,1,1 block 512,1,1 -> " + reduce +
                " grid 64,1,1 block 512,1,1 (1 added, 1 removed)");
}

TEST(KernelChange, EqualSequencesHaveNoChangeAndLongNamesAreCut) {
  EXPECT_TRUE(
      describe_kernel_changes(records(testing::mkl_sgemm_kernels(true)), records(testing::mkl_sgemm_kernels(true)))
          .empty());
  const std::string long_name = "void cutlass::Kernel<" + std::string(400, 'x') + ">()";
  const auto text = kernel_change_text(describe_kernel_changes({}, records({long_name})).at(0));
  EXPECT_EQ(text, "CUTLASS kernel none -> " + long_name.substr(0, 157) + "... (1 added)");
}

}  // namespace
}  // namespace repro_audit
