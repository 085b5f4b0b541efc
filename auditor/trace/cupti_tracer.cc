#include "trace/cupti_tracer.h"

#include <cuda.h>
#include <cupti.h>
#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <string>

namespace repro_audit {
namespace {

// The kernel record struct changes with the CUDA version: Kernel10 in 13.0, Kernel11 from 13.1.
#if CUDA_VERSION >= 13010
using KernelActivity = CUpti_ActivityKernel11;
#else
using KernelActivity = CUpti_ActivityKernel10;
#endif

constexpr std::size_t kBufferSize = 8 * 1024 * 1024;
constexpr std::size_t kBufferAlignment = 8;

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && plain ? plain : name;
  std::free(plain);
  return result;
}

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text ? text : fmt::format("CUPTI error {}", static_cast<int>(result));
}

class CuptiTracer;
// CUPTI's buffer callbacks are plain functions; they deliver records to the live tracer here.
std::atomic<CuptiTracer*> active_tracer{nullptr};

class CuptiTracer : public Tracer {
 public:
  CuptiTracer() {
    CuptiTracer* expected = nullptr;
    if (!active_tracer.compare_exchange_strong(expected, this)) {
      reason_ = "CUPTI: another tracer is active in this process";
      return;
    }
    CUptiResult result = cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed);
    if (result == CUPTI_SUCCESS) result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (result != CUPTI_SUCCESS) {
      reason_ = "CUPTI: " + result_text(result);
      active_tracer.store(nullptr);
    }
  }
  ~CuptiTracer() override {
    if (!reason_.empty()) return;
    cuptiActivityFlushAll(0);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    active_tracer.store(nullptr);
  }

  std::string unavailable_reason() const override { return reason_; }

  void begin_run() override {
    if (!reason_.empty()) return;
    cuptiActivityFlushAll(0);  // drop whatever ran before this run
    std::lock_guard<std::mutex> lock(mutex_);
    records_.clear();
  }

  std::vector<KernelRecord> end_run() override {
    if (!reason_.empty()) return {};
    cuptiActivityFlushAll(0);  // the caller synchronised the device; this delivers every record
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(records_);
  }

 private:
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferSize));
    *size = kBufferSize;
    *max_records = 0;
  }

  static void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                        std::size_t valid) {
    auto records = kernel_records_from_buffer(buffer, valid);
    std::free(buffer);
    if (auto* tracer = active_tracer.load()) {
      std::lock_guard<std::mutex> lock(tracer->mutex_);
      for (auto& record : records)
        if (tracer->records_.size() < kMaxKernelsPerRun) tracer->records_.push_back(std::move(record));
    }
  }

  std::string reason_;
  std::mutex mutex_;
  std::vector<KernelRecord> records_;
};

}  // namespace

std::vector<KernelRecord> kernel_records_from_buffer(std::uint8_t* buffer, std::size_t valid_size) {
  std::vector<KernelRecord> records;
  CUpti_Activity* activity = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &activity) == CUPTI_SUCCESS) {
    if (activity->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && activity->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* kernel = reinterpret_cast<const KernelActivity*>(activity);
    records.push_back({demangle(kernel->name), fmt::format("{},{},{}", kernel->gridX, kernel->gridY, kernel->gridZ),
                       fmt::format("{},{},{}", kernel->blockX, kernel->blockY, kernel->blockZ)});
  }
  return records;
}

std::unique_ptr<Tracer> make_cupti_tracer() { return std::make_unique<CuptiTracer>(); }

}  // namespace repro_audit
