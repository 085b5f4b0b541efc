#include "trace/record_function_tracer.h"

#include <ATen/record_function.h>

#include <atomic>
#include <mutex>
#include <stdexcept>

namespace repro_audit {
namespace {

class RecordFunctionTracer;
// The start callback must be a plain function pointer, so it finds its tracer here.
std::atomic<RecordFunctionTracer*> active_tracer{nullptr};

class RecordFunctionTracer : public Tracer {
 public:
  RecordFunctionTracer() {
    RecordFunctionTracer* expected = nullptr;
    if (!active_tracer.compare_exchange_strong(expected, this))
      throw std::logic_error("only one RecordFunction tracer may exist at a time");
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_start).scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  }
  ~RecordFunctionTracer() override {
    at::removeCallback(handle_);
    active_tracer.store(nullptr);
  }

  std::string unavailable_reason() const override { return ""; }

  void begin_run() override {
    std::lock_guard<std::mutex> lock(mutex_);
    records_.clear();
    recording_ = true;
  }

  std::vector<KernelRecord> end_run() override {
    std::lock_guard<std::mutex> lock(mutex_);
    recording_ = false;
    return std::move(records_);
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& function) {
    if (auto* tracer = active_tracer.load()) tracer->record(function.name());
    return nullptr;
  }

  void record(const char* name) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (recording_ && records_.size() < kMaxKernelsPerRun) records_.push_back({name, "", ""});
  }

  at::CallbackHandle handle_ = 0;
  std::mutex mutex_;
  bool recording_ = false;
  std::vector<KernelRecord> records_;
};

}  // namespace

std::unique_ptr<Tracer> make_record_function_tracer() { return std::make_unique<RecordFunctionTracer>(); }

}  // namespace repro_audit
