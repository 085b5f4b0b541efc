// CUDA builds: CUPTI tracing and CUDA-event timing on CUDA devices, the CPU ones elsewhere.
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>

#include "fingerprint/nvml.h"
#include "trace/cupti_tracer.h"
#include "trace/held_stream.h"
#include "trace/library_verbose_tracer.h"
#include "trace/record_function_tracer.h"
#include "trace/steady_clock_timer.h"
#include "trace/tracer_factory.h"

namespace repro_audit {
namespace {

// Determinism runs: events around the run as it happened. Timing-only runs: the stream held while the
// run's work is queued (trace/held_stream.h), events after the hold, and the SM clock from NVML after
// each. A hold can give up once for a reason that does not come back (a kernel loaded on its first
// launch, a library handle made on first use, both of which wait for the GPU): the run that gave up is
// no sample, and the next is held again. An op that waits for the GPU on every run gives up twice in a
// row: the cell's later runs are timed without a hold (their time then includes the host's
// launching, and the report says so).
class CudaEventTimer : public RunTimer {
 public:
  void start() override {
    holding_now_ = false;
    gave_up_ = false;
    started_.record(c10::cuda::getCurrentCUDAStream());
  }
  void start_timed() override {
    const auto stream = c10::cuda::getCurrentCUDAStream();
    if (!clock_) clock_.emplace(pci_bus_id(stream.device_index()));
    holding_now_ = hold_ && held();
    if (holding_now_) held_->hold(stream.stream(), kHoldLimitNs);
    started_.record(stream);
  }
  std::int64_t stop_ns() override {
    ended_.record(c10::cuda::getCurrentCUDAStream());
    if (holding_now_) held_->release();
    ended_.synchronize();
    gave_up_ = holding_now_ && held_->gave_up();
    give_ups_in_a_row_ = gave_up_ ? give_ups_in_a_row_ + 1 : 0;
    if (give_ups_in_a_row_ >= 2) {
      hold_ = false;
      note_ =
          "timed without holding the stream: the op waits for the GPU while it runs (a copy to the host or "
          "a synchronisation), so its times include the host's launching of its kernels";
    }
    clock_mhz_ = clock_ ? static_cast<int>(clock_->sm_mhz()) : 0;
    return static_cast<std::int64_t>(static_cast<double>(started_.elapsed_time(ended_)) * 1e6);
  }
  int clock_mhz() const override { return clock_mhz_; }
  bool last_hold_gave_up() const override { return gave_up_; }
  void begin_cell() override {
    hold_ = true;
    gave_up_ = false;
    give_ups_in_a_row_ = 0;
    note_ = hold_error_.empty() ? "" : "timed without holding the stream: " + hold_error_;
  }
  std::string timed_region_note() const override { return note_; }

 private:
  // Far above the launching of any probe's kernels, short enough that a cell whose op waits loses
  // little before the timer stops holding it.
  static constexpr std::uint64_t kHoldLimitNs = 50'000'000;

  static std::string pci_bus_id(int index) {
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof id, index) != cudaSuccess) return "";
    return id;
  }
  // The hold's pinned flags, made on first use (CUDA is not touched before a cell needs it).
  bool held() {
    if (!held_ && hold_error_.empty()) try {
        held_ = std::make_unique<HeldStream>();
      } catch (const std::exception& error) {
        hold_error_ = error.what();
        note_ = "timed without holding the stream: " + hold_error_;
      }
    return held_ != nullptr;
  }

  at::cuda::CUDAEvent started_{cudaEventDefault};
  at::cuda::CUDAEvent ended_{cudaEventDefault};
  std::unique_ptr<HeldStream> held_;
  std::string hold_error_;
  std::optional<NvmlClock> clock_;
  bool hold_ = true, holding_now_ = false, gave_up_ = false;
  int give_ups_in_a_row_ = 0;
  int clock_mhz_ = 0;
  std::string note_;
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
