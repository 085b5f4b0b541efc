// The word-sums kernel (hash/word_sums_cuda.cu) on a real GPU equals the host reference
// (hash/word_sums.h) bit for bit: every length (a partial last word), every alignment (a view that starts
// mid-word), a large buffer (the grid-stride loop). Skipped where no GPU is.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "hash/word_sums.h"

namespace {

using repro_audit::WordSums;

class WordSumsOnTheDevice : public testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device here";
  }
  static WordSums on_device(const std::vector<unsigned char>& bytes, std::size_t offset, std::size_t length) {
    unsigned char* data = nullptr;
    unsigned long long* sums = nullptr;
    EXPECT_EQ(cudaMalloc(&data, bytes.size() + 1), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&sums, 16), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemset(sums, 0, 16), cudaSuccess);
    EXPECT_EQ(repro_audit_word_sums(data + offset, length, sums, nullptr), 0);
    unsigned long long host[2] = {0, 0};
    EXPECT_EQ(cudaMemcpy(host, sums, 16, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(data);
    cudaFree(sums);
    return {host[0], host[1]};
  }
};

TEST_F(WordSumsOnTheDevice, EqualsTheHostReferenceAtEveryLengthAndAlignment) {
  std::mt19937 random(7);
  std::vector<unsigned char> bytes((std::size_t{64} << 20) + 77);
  for (auto& byte : bytes) byte = static_cast<unsigned char>(random());
  for (const std::size_t length : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{255},
                                   std::size_t{4096}, std::size_t{1000003}, std::size_t{64} << 20})
    for (const std::size_t offset : {0, 1, 3, 8, 12}) {
      const auto expected = repro_audit::word_sums(bytes.data() + offset, length);
      const auto got = on_device(bytes, offset, length);
      EXPECT_EQ(got.a, expected.a) << length << " bytes at offset " << offset;
      EXPECT_EQ(got.b, expected.b) << length << " bytes at offset " << offset;
    }
}

// A 1 GiB buffer at the device's bandwidth: printed for the record, not asserted.
TEST_F(WordSumsOnTheDevice, ReducesAGibibyteAtMemoryBandwidth) {
  const std::size_t length = std::size_t{1} << 30;
  unsigned char* data = nullptr;
  unsigned long long* sums = nullptr;
  ASSERT_EQ(cudaMalloc(&data, length), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&sums, 16), cudaSuccess);
  cudaMemset(data, 1, length);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e9f;
  for (int i = 0; i < 5; ++i) {
    cudaMemset(sums, 0, 16);
    cudaEventRecord(start);
    repro_audit_word_sums(data, length, sums, nullptr);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = std::min(best, ms);
  }
  // The device's memory bandwidth: memory clock (kHz) x bus width (bits) / 8 x 2 (double data rate).
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  const double peak_gb = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  const double gb = static_cast<double>(length) / 1e9 / (best / 1000.0);
  RecordProperty("gb_per_second", std::to_string(gb));
  std::printf("word sums of 1 GiB: %.3f ms, %.0f GB/s (%.0f%% of the device's %.0f GB/s)\n", best, gb,
              peak_gb > 0 ? 100.0 * gb / peak_gb : 0.0, peak_gb);
  cudaFree(data);
  cudaFree(sums);
  EXPECT_GT(best, 0.0f);
}

}  // namespace
