#pragma once
// The worker: runs a batch of cells in this process and reports each as one JSON line.
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "protocol/worker_protocol.h"
#include "trace/run_timer.h"
#include "trace/tracer.h"
#include "verdict/observation.h"

namespace repro_audit {

class InputCache;    // probe/probe.h
class OutputCopier;  // recording/digest_pipeline.h

// Runs one cell: settings, inputs, warm-up and timed runs, digests, kernel sequences. A probe's failure
// becomes the observation's status, never a throw. With `request.timing_round` 2 or more, only that round.
// `inputs`, when given, shares the random inputs of a variant's cells (probe/probe.h, InputCache);
// `copier`, when given, replaces the device's (recording/digest_pipeline.h): tests order a fake stream.
ProcessObservation run_cell(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                            InputCache* inputs = nullptr, OutputCopier* copier = nullptr);

// Runs every cell of the request, emitting `environment` (unless `environment_sent`: a worker says it before
// reading its request), `start` and `cell` per cell, then `done`. A failure of the machine (EnvironmentError) is
// no cell's: it emits `environment_failure` and throws.
void run_worker(const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                const std::function<void(const nlohmann::json&)>& emit, bool environment_sent = false);

// An internal subcommand's events (worker, rank) on the original stdout, one JSON line each; other output: stderr.
std::function<void(const nlohmann::json&)> event_stream();

}  // namespace repro_audit
