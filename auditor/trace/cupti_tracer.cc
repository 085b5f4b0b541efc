#include "trace/cupti_tracer.h"

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <string>
#include <unordered_map>

#include "trace/cupti_activity.h"

namespace repro_audit {
namespace {

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
    // Kernels name the op that launched them only through these; without them they name none.
    if (result == CUPTI_SUCCESS)
      correlating_ = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS;
    if (result != CUPTI_SUCCESS) {
      reason_ = "CUPTI: " + result_text(result);
      active_tracer.store(nullptr);
    }
  }
  ~CuptiTracer() override {
    if (!reason_.empty()) return;
    cuptiActivityFlushAll(0);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (correlating_) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    active_tracer.store(nullptr);
  }

  std::string unavailable_reason() const override { return reason_; }

  void begin_run() override {
    if (!reason_.empty()) return;
    cuptiActivityFlushAll(0);  // drop whatever ran before this run
    std::lock_guard<std::mutex> lock(mutex_);
    records_.clear();
    correlations_.clear();
    external_.clear();
  }

  std::vector<KernelRecord> end_run() override {
    if (!reason_.empty()) return {};
    cuptiActivityFlushAll(0);  // the caller synchronised the device; this delivers every record
    std::lock_guard<std::mutex> lock(mutex_);
    attribute_kernels(records_, correlations_, external_);
    return std::move(records_);
  }

  void pause() override {
    if (!reason_.empty() || paused_) return;
    cuptiActivityFlushAll(0);
    paused_ = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
  }
  void resume() override {
    if (!paused_) return;
    if (const auto result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); result != CUPTI_SUCCESS)
      reason_ = "CUPTI: " + result_text(result);
    paused_ = false;
  }

  // The launches made from here on carry the op as their external correlation id.
  void enter_op(std::int64_t op) override {
    if (reason_.empty() && correlating_)
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, static_cast<std::uint64_t>(op));
  }
  void exit_op() override {
    std::uint64_t last = 0;
    if (reason_.empty() && correlating_)
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

 private:
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferSize));
    *size = kBufferSize;
    *max_records = 0;
  }

  static void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                        std::size_t valid) {
    auto parsed = cupti_records_from_buffer(buffer, valid);
    std::free(buffer);
    if (auto* tracer = active_tracer.load()) {
      std::lock_guard<std::mutex> lock(tracer->mutex_);
      for (std::size_t i = 0; i < parsed.kernels.size(); ++i)
        if (tracer->records_.size() < kMaxKernelsPerRun) {
          tracer->records_.push_back(std::move(parsed.kernels[i]));
          tracer->correlations_.push_back(parsed.correlations[i]);
        }
      tracer->external_.insert(tracer->external_.end(), parsed.external.begin(), parsed.external.end());
    }
  }

  std::string reason_;
  bool paused_ = false;
  bool correlating_ = false;
  std::mutex mutex_;
  std::vector<KernelRecord> records_;
  std::vector<std::uint32_t> correlations_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external_;
};

}  // namespace

CuptiBufferRecords cupti_records_from_buffer(std::uint8_t* buffer, std::size_t valid_size) {
  CuptiBufferRecords records;
  CUpti_Activity* activity = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &activity) == CUPTI_SUCCESS) {
    if (activity->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* external = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(activity);
      if (external->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        records.external.emplace_back(external->correlationId, external->externalId);
      continue;
    }
    if (activity->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && activity->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* kernel = reinterpret_cast<const KernelActivity*>(activity);
    records.kernels.push_back({demangle(kernel->name),
                               fmt::format("{},{},{}", kernel->gridX, kernel->gridY, kernel->gridZ),
                               fmt::format("{},{},{}", kernel->blockX, kernel->blockY, kernel->blockZ)});
    records.correlations.push_back(kernel->correlationId);
  }
  return records;
}

std::vector<KernelRecord> kernel_records_from_buffer(std::uint8_t* buffer, std::size_t valid_size) {
  return cupti_records_from_buffer(buffer, valid_size).kernels;
}

void attribute_kernels(std::vector<KernelRecord>& kernels, const std::vector<std::uint32_t>& correlations,
                       const std::vector<std::pair<std::uint32_t, std::uint64_t>>& external) {
  std::unordered_map<std::uint32_t, std::uint64_t> op_of(external.begin(), external.end());
  for (std::size_t i = 0; i < kernels.size() && i < correlations.size(); ++i)
    if (const auto it = op_of.find(correlations[i]); it != op_of.end())
      kernels[i].op = static_cast<std::int64_t>(it->second);
}

std::unique_ptr<Tracer> make_cupti_tracer() { return std::make_unique<CuptiTracer>(); }

}  // namespace repro_audit
