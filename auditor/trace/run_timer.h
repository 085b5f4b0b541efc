#pragma once
// Times one run: CUDA events on the current stream on a GPU, a steady clock on the CPU.
#include <cstdint>
#include <memory>
#include <string>

namespace repro_audit {

class RunTimer {
 public:
  virtual ~RunTimer() = default;
  virtual void start() = 0;
  // Waits for the run's work to finish, then returns its duration.
  virtual std::int64_t stop_ns() = 0;
};

// The tracer and timer for a device; CUDA ones only in CUDA builds (a file per platform).
std::unique_ptr<RunTimer> make_run_timer(const std::string& device);

}  // namespace repro_audit
