#pragma once
// Runs cells in the test process without tracing, timing on the steady clock.
#include "trace/steady_clock_timer.h"
#include "trace/tracer.h"
#include "worker/worker.h"

namespace repro_audit::testing {

inline ProcessObservation run_untraced(const Cell& cell, const WorkerRequest& request) {
  NullTracer tracer("not traced in this test");
  SteadyClockTimer timer;
  return run_cell(cell, request, tracer, timer);
}

}  // namespace repro_audit::testing
