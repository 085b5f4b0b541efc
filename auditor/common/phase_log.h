#pragma once
// REPRO_AUDIT_PHASE_LOG=FILE: every cell a worker runs appends one JSON line to FILE with the time its
// phases took: preparing it, and within that the inputs it drew (made, digested and moved to the
// device) and the sensitivity check on the CPU, the runs, the tracer's begin and end of each run, the digests,
// the timing-only runs and the tracer's pause and resume around them, a later round's warm-up, and
// the whole cell. Inert unless set; tools/gpu-proof reads it to say where a GPU audit's time goes.
#include <chrono>
#include <cstdint>
#include <string>

namespace repro_audit {

enum class Phase {
  prepare,
  inputs,
  sensitivity,
  begin_run,
  run,
  collect,
  end_run,
  submit,
  pause,
  timing,
  resume,
  warmup,
  cell,
  count
};

bool phase_log_enabled();
void add_phase_time(Phase phase, std::int64_t ns);
// Appends the cell's line (its key and timing round) and starts the next cell's sums from zero.
void flush_phase_log(const std::string& key, int round);

// Adds the time from its construction to its destruction to `phase`, where the log is enabled.
class PhaseScope {
 public:
  explicit PhaseScope(Phase phase) : phase_(phase), on_(phase_log_enabled()) {
    if (on_) started_ = std::chrono::steady_clock::now();
  }
  ~PhaseScope() {
    if (on_)
      add_phase_time(
          phase_,
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started_).count());
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase phase_;
  bool on_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace repro_audit
