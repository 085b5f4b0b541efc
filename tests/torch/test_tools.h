#pragma once
// Cells for tests, run in the test process without tracing, timing on the steady clock.
#include "config/settings.h"
#include "trace/steady_clock_timer.h"
#include "trace/tracer.h"
#include "worker/worker.h"

namespace repro_audit::testing {

// A CPU cell of `probe/variant` with the defaults overlaid by `overrides`.
inline Cell make_cell(const std::string& probe, const std::string& variant, const FlagSet& overrides) {
  Cell cell;
  cell.probe = probe;
  cell.variant = variant;
  cell.device = "cpu";
  cell.settings = make_flag_set(overrides, "cpu");
  cell.key = cell_key(probe, variant, "cpu", cell.settings);
  return cell;
}

// `copier`, when given, copies each run's outputs for digesting (worker/worker.h).
inline ProcessObservation run_untraced(const Cell& cell, const WorkerRequest& request, OutputCopier* copier = nullptr) {
  NullTracer tracer("not traced in this test");
  SteadyClockTimer timer;
  return run_cell(cell, request, tracer, timer, nullptr, copier);
}

}  // namespace repro_audit::testing
