#pragma once
#include <chrono>

#include "trace/run_timer.h"

namespace repro_audit {

class SteadyClockTimer : public RunTimer {
 public:
  void start() override { started_ = std::chrono::steady_clock::now(); }
  std::int64_t stop_ns() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started_).count();
  }

 private:
  std::chrono::steady_clock::time_point started_;
};

}  // namespace repro_audit
