// CUDA builds: CUPTI tracing and CUDA-event timing on CUDA devices, the CPU ones elsewhere.
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include "trace/cupti_tracer.h"
#include "trace/library_verbose_tracer.h"
#include "trace/record_function_tracer.h"
#include "trace/steady_clock_timer.h"
#include "trace/tracer_factory.h"

namespace repro_audit {
namespace {

class CudaEventTimer : public RunTimer {
 public:
  void start() override { started_.record(c10::cuda::getCurrentCUDAStream()); }
  std::int64_t stop_ns() override {
    ended_.record(c10::cuda::getCurrentCUDAStream());
    ended_.synchronize();
    return static_cast<std::int64_t>(static_cast<double>(started_.elapsed_time(ended_)) * 1e6);
  }

 private:
  at::cuda::CUDAEvent started_{cudaEventDefault};
  at::cuda::CUDAEvent ended_{cudaEventDefault};
};

}  // namespace

std::unique_ptr<Tracer> make_tracer(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) return make_cupti_tracer();
  return make_library_verbose_tracer(make_record_function_tracer());
}

std::unique_ptr<RunTimer> make_run_timer(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) return std::make_unique<CudaEventTimer>();
  return std::make_unique<SteadyClockTimer>();
}

}  // namespace repro_audit
