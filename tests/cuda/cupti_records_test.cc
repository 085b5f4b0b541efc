// The CUPTI conversion, fed activity records built in host memory: no GPU needed, only the headers.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "trace/cupti_tracer.h"

namespace repro_audit {
namespace {

#if CUDA_VERSION >= 13010
using KernelActivity = CUpti_ActivityKernel11;
#else
using KernelActivity = CUpti_ActivityKernel10;
#endif

KernelActivity kernel_record(const char* name, int grid_x, int block_x, CUpti_ActivityKind kind) {
  KernelActivity record;
  std::memset(&record, 0, sizeof record);
  record.kind = kind;
  record.name = name;
  record.gridX = grid_x;
  record.gridY = 2;
  record.gridZ = 1;
  record.blockX = block_x;
  record.blockY = 1;
  record.blockZ = 1;
  return record;
}

TEST(CuptiRecords, HostBuiltKernelRecordsBecomeNeutralRecords) {
  alignas(8) static char first_name[] = "_Z6kernelIfLi4EEvPT_i";
  alignas(8) static char second_name[] = "plain_kernel";
  std::vector<KernelActivity> records = {
      kernel_record(first_name, 40, 128, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
      kernel_record(second_name, 1, 32, CUPTI_ACTIVITY_KIND_KERNEL),
  };
  const auto bytes = records.size() * sizeof(KernelActivity);
  std::vector<std::uint8_t> buffer(bytes);
  std::memcpy(buffer.data(), records.data(), bytes);
  const auto neutral = kernel_records_from_buffer(buffer.data(), bytes);
  ASSERT_EQ(neutral.size(), 2u);
  EXPECT_EQ(neutral[0].name, "void kernel<float, 4>(float*, int)");  // demangled
  EXPECT_EQ(neutral[0].grid, "40,2,1");
  EXPECT_EQ(neutral[0].block, "128,1,1");
  EXPECT_EQ(neutral[1].name, "plain_kernel");  // not mangled: kept as it is
  EXPECT_EQ(neutral[1].block, "32,1,1");
}

TEST(CuptiRecords, AnEmptyBufferGivesNoRecords) {
  std::uint8_t buffer[8] = {};
  EXPECT_TRUE(kernel_records_from_buffer(buffer, 0).empty());
}

TEST(CuptiTracer, WithoutADriverItSaysWhyAndRecordsNothing) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    GTEST_SKIP() << "a GPU is present: the no-driver path cannot be shown here";
  const auto tracer = make_cupti_tracer();
  EXPECT_EQ(tracer->unavailable_reason().rfind("CUPTI: ", 0), 0u) << tracer->unavailable_reason();
  tracer->begin_run();
  EXPECT_TRUE(tracer->end_run().empty());
}

}  // namespace
}  // namespace repro_audit
