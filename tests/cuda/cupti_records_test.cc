// The CUPTI conversion, fed activity records built in host memory: no GPU needed, only the headers.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "trace/cupti_activity.h"
#include "trace/cupti_tracer.h"

namespace repro_audit {
namespace {

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

TEST(CuptiRecords, KernelsNameTheOpThatLaunchedThemThroughExternalCorrelation) {
  alignas(8) static char name[] = "gemm_kernel";
  auto first = kernel_record(name, 8, 256, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  first.correlationId = 41;
  auto second = kernel_record(name, 8, 256, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  second.correlationId = 42;
  auto unrelated = kernel_record(name, 1, 32, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  unrelated.correlationId = 43;
  CUpti_ActivityExternalCorrelation op7, other_kind;
  std::memset(&op7, 0, sizeof op7);
  op7.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  op7.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  op7.externalId = 7;
  op7.correlationId = 42;
  other_kind = op7;
  other_kind.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;  // someone else's ids
  other_kind.correlationId = 41;
  // Buffer order as CUPTI writes it: correlation records before the kernels they name.
  std::vector<std::uint8_t> buffer;
  const auto append = [&](const void* record, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(record);
    buffer.insert(buffer.end(), bytes, bytes + size);
  };
  append(&op7, sizeof op7);
  append(&other_kind, sizeof other_kind);
  append(&first, sizeof first);
  append(&second, sizeof second);
  append(&unrelated, sizeof unrelated);
  auto parsed = cupti_records_from_buffer(buffer.data(), buffer.size());
  ASSERT_EQ(parsed.kernels.size(), 3u);
  EXPECT_EQ(parsed.correlations, (std::vector<std::uint32_t>{41, 42, 43}));
  ASSERT_EQ(parsed.external.size(), 1u);
  attribute_kernels(parsed.kernels, parsed.correlations, parsed.external);
  EXPECT_EQ(parsed.kernels[0].op, -1);
  EXPECT_EQ(parsed.kernels[1].op, 7);
  EXPECT_EQ(parsed.kernels[2].op, -1);
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
