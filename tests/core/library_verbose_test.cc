// The oneDNN and MKL verbose parser on real captured output (fixtures/library_verbose/capture.py says
// how it was captured): conv2d forward and backward in float32, a float32 mm (MKL), a bfloat16 conv2d
// and mm (oneDNN), two runs of one process.
#include "trace/library_verbose.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "trace/tracer.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

std::string verbose_fixture(const std::string& name) {
  std::ifstream in(std::string(test_paths::kFixtureDir) + "/library_verbose/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names(const std::vector<KernelRecord>& records) {
  std::vector<std::string> result;
  for (const auto& record : records) result.push_back(record.name);
  return result;
}

const std::string kVerboseSgemm = "mkl:SGEMM(N,N,512,512,512,*,*,512,*,512,*,*,512) CNR:OFF NThr:2";
const std::string kConvForward =
    "onednn:convolution jit:avx512_core forward_training src:f32 wei:f32 dst:f32 alg:convolution_direct "
    "mb8_ic32oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1";

TEST(LibraryVerbose, FirstRunGivesEveryPrimitiveAndCallWithTheBannersBeforeEachLibrary) {
  LibraryVerboseParser parser;
  const auto run = parser.parse_run(verbose_fixture("first-run.txt"));
  const auto records = names(run.records);
  // 17 oneDNN exec lines and 1 MKL call, each library's banner before its first record.
  ASSERT_EQ(records.size(), 20u);
  EXPECT_EQ(records[0], "onednn:oneDNN v3.12.0 isa:Intel AVX-512 with Intel DL Boost and bfloat16 support");
  EXPECT_EQ(records[1], "onednn:reorder jit:blk src:f32 dst:f32 8x32x32x32");
  EXPECT_EQ(records[3], kConvForward);
  EXPECT_EQ(records[7],
            "onednn:convolution jit:avx512_core backward_data src:f32 wei:f32 dst:f32 "
            "alg:convolution_direct mb8_ic32oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1");
  EXPECT_EQ(records[13],
            "mkl:oneMKL 2024.0 Update 2 for Intel(R) 64 architecture Intel(R) Architecture processors, Lnx lp64 "
            "gnu_thread");
  EXPECT_EQ(records[14], kVerboseSgemm);
  EXPECT_EQ(records[17],
            "onednn:convolution jit_bf16:avx512_core_bf16 forward_training src:bf16 wei:bf16 dst:bf16 "
            "alg:convolution_direct mb8_ic32oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1");
  EXPECT_EQ(records[19], "onednn:matmul brg_matmul:avx512_core_bf16 src:bf16 wei:bf16 dst:bf16 512x512:512x512");
  EXPECT_EQ(run.other_output, "");  // banners and info lines are not passed on
}

TEST(LibraryVerbose, ALaterRunWithoutBannersGivesTheSameRecordsAsTheFirst) {
  LibraryVerboseParser parser;
  const auto first = parser.parse_run(verbose_fixture("first-run.txt"));
  const auto second = parser.parse_run(verbose_fixture("second-run.txt"));
  EXPECT_EQ(names(second.records), names(first.records));
  EXPECT_EQ(kernel_sequence_digest(second.records), kernel_sequence_digest(first.records));
  // Without the banner (a parser that never saw it), only the banner records are missing.
  const auto unseen = LibraryVerboseParser().parse_run(verbose_fixture("second-run.txt"));
  EXPECT_EQ(unseen.records.size(), first.records.size() - 2);
}

TEST(LibraryVerbose, NoTimingOrAddressEntersARecord) {
  LibraryVerboseParser parser;
  for (const auto& record : parser.parse_run(verbose_fixture("first-run.txt")).records) {
    EXPECT_EQ(record.name.find("0x"), std::string::npos) << record.name;
    EXPECT_EQ(record.name.find("ms "), std::string::npos) << record.name;
    EXPECT_EQ(record.name.find("TID:"), std::string::npos) << record.name;
    EXPECT_EQ(record.name.find("GHz"), std::string::npos) << record.name;
    EXPECT_TRUE(record.grid.empty() && record.block.empty());
  }
}

TEST(LibraryVerbose, TimestampsOnOneDnnLinesChangeNothing) {
  LibraryVerboseParser plain, stamped;
  plain.parse_run(verbose_fixture("first-run.txt"));
  stamped.parse_run(verbose_fixture("first-run.txt"));
  EXPECT_EQ(names(stamped.parse_run(verbose_fixture("onednn-timestamps-second-run.txt")).records),
            names(plain.parse_run(verbose_fixture("second-run.txt")).records));
}

TEST(LibraryVerbose, MklCbwrChangesOnlyTheMklCallRecord) {
  const auto plain = names(LibraryVerboseParser().parse_run(verbose_fixture("first-run.txt")).records);
  const auto compatible =
      names(LibraryVerboseParser().parse_run(verbose_fixture("mkl-cbwr-compatible-first-run.txt")).records);
  ASSERT_EQ(plain.size(), compatible.size());
  for (std::size_t i = 0; i < plain.size(); ++i)
    if (plain[i] == kVerboseSgemm)
      EXPECT_EQ(compatible[i], "mkl:SGEMM(N,N,512,512,512,*,*,512,*,512,*,*,512) CNR:COMPATIBLE NThr:2");
    else
      EXPECT_EQ(compatible[i], plain[i]);
}

TEST(LibraryVerbose, OtherLinesArePassedOnInOrder) {
  LibraryVerboseParser parser;
  const auto run = parser.parse_run("probe says hello\n" + verbose_fixture("second-run.txt") + "unterminated");
  EXPECT_EQ(run.other_output, "probe says hello\nunterminated\n");
  EXPECT_EQ(run.records.size(), 18u);  // no banners: this parser never saw them
}

TEST(LibraryVerbose, MklCallLines) {
  // Every argument of the batched call is a pointer.
  const auto batch = parse_mkl_call_line(
      "MKL_VERBOSE SGEMM_BATCH(N,N,0x7ffe4962ead8,0x7ffe4962ead4,0x7ffe4962ead0,(nil),0x7ffe4962ebb0) 11.35ms "
      "CNR:AUTO,STRICT Dyn:1 FastMM:1 TID:0  NThr:1");
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->name, "mkl:SGEMM_BATCH(N,N,*,*,*,*,*) CNR:AUTO,STRICT NThr:1");
  EXPECT_FALSE(parse_mkl_call_line("MKL_VERBOSE SGEMM(N,N,512,512"));  // cut off
  EXPECT_FALSE(
      parse_mkl_call_line("MKL_VERBOSE oneMKL 2024.0 Update 2 Product build 20240605 for Intel(R) 64 "
                          "architecture Intel(R) Architecture processors, Lnx 2.60GHz lp64 gnu_thread"));
  EXPECT_FALSE(parse_mkl_call_line("SGEMM(N,N,1,1,1) 1us CNR:OFF"));
}

TEST(LibraryVerbose, OneDnnLinesOtherThanPrimitiveExecutionGiveNoRecord) {
  EXPECT_FALSE(parse_onednn_exec_line("onednn_verbose,v1,info,cpu,runtime:OpenMP,nthr:2"));
  EXPECT_FALSE(
      parse_onednn_exec_line("onednn_verbose,v1,primitive,info,template:operation,engine,primitive,"
                             "implementation,prop_kind,memory_descriptors,attributes,auxiliary,problem_desc,"
                             "exec_time"));
  EXPECT_FALSE(parse_onednn_exec_line("onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni"));  // cut off
  EXPECT_FALSE(parse_onednn_exec_line("onednn_verbose,v1,graph,exec,cpu,0,dnnl_backend,a,b,c,d,e,1.0"));
  const auto reorder = parse_onednn_exec_line(
      "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcd::f0 "
      "dst:bf16::blocked:aBcd16b::f0,attr-scratchpad:user attr-fpmath:bf16,,8x32x32x32,0.5");
  ASSERT_TRUE(reorder);
  EXPECT_EQ(reorder->name, "onednn:reorder jit:uni src:f32 dst:bf16 attr-fpmath:bf16 8x32x32x32");
}

}  // namespace
}  // namespace repro_audit
