#pragma once
// Times one run: CUDA events on the current stream on a GPU, a steady clock on the CPU.
#include <cstdint>
#include <memory>
#include <string>

namespace repro_audit {

class RunTimer {
 public:
  virtual ~RunTimer() = default;
  // A determinism run: the run as it happened (traced, digests taken beside it).
  virtual void start() = 0;
  // A timing-only run. On a GPU the stream is held until the run's work is queued, so the time is the
  // GPU's execution of the op's kernels, not the host's launching of them (trace/held_stream.h).
  virtual void start_timed() { start(); }
  // Waits for the run's work to finish, then returns its duration.
  virtual std::int64_t stop_ns() = 0;
  // The GPU's SM clock (MHz) read after the last timed run; 0 where none is read (the CPU).
  virtual int clock_mhz() const { return 0; }
  // A new cell: what the timer learnt of the last one (an op that waits for the GPU cannot be held) is
  // forgotten.
  virtual void begin_cell() {}
  // How the last timed run was timed, for the report: "" for the usual way, else why not.
  virtual std::string timed_region_note() const { return ""; }
  // Whether the last timed run's hold gave up before the run's work was queued behind it: its time
  // holds the wait, not the op, and is no sample (trace/held_stream.h).
  virtual bool last_hold_gave_up() const { return false; }
};

// The tracer and timer for a device; CUDA ones only in CUDA builds (a file per platform).
std::unique_ptr<RunTimer> make_run_timer(const std::string& device);

}  // namespace repro_audit
