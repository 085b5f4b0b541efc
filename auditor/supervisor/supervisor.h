#pragma once
// Runs batches of cells in worker processes: one worker per batch and cross-process repeat,
// time limits per cell, a fresh worker after a crash, every finished cell handed on at once.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "verdict/observation.h"

namespace repro_audit {

struct SupervisorOptions {
  std::string executable;  // the repro-audit binary, started as `executable worker`
  std::string device;
  int repeats = 10;
  int warmup = 1;
  int processes = 2;
  std::string log_folder;  // worker stderr logs
  // (cell key, process index) pairs already finished, e.g. from a journal: not run again.
  std::set<std::pair<std::string, int>> finished;
  std::function<void(const Cell&, const ProcessObservation&)> on_cell;
  std::function<void(const nlohmann::json&)> on_environment;
  std::function<bool()> stop_requested = [] { return false; };
};

using Observations = std::map<std::string, std::vector<ProcessObservation>>;

// The JSON a worker reads on stdin.
nlohmann::json batch_request(const Batch& batch, const std::vector<Cell>& cells, int process,
                             const SupervisorOptions& options);

// The worker's environment for a batch: CUBLAS_WORKSPACE_CONFIG set or removed.
std::map<std::string, std::string> worker_environment(const FlagSet& process_settings);

Observations run_batches(const std::vector<Batch>& batches, const SupervisorOptions& options);

}  // namespace repro_audit
