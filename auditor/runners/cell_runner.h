#pragma once
// The torch side of a kind of cell (kind/cell_kind.h): how a worker prepares the cell's op and what
// it measures of each run besides the digests, divergence and stopping rules every kind shares
// (worker.cc). One file per kind, `worker/<kind>_cell.cc`, and one row in cell_runners.cc.
#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/input_scheme.h"
#include "plan/plan.h"
#include "probe/probe.h"
#include "recording/digest_pipeline.h"
#include "trace/tracer.h"
#include "verdict/observation.h"

namespace repro_audit {

struct CellSetup {
  at::Device device = at::kCPU;
  std::uint64_t seed = 0;
  InputScheme scheme = kCurrentInputScheme;
  Tracer* tracer = nullptr;
  InputCache* inputs = nullptr;      // the inputs the variant's cells share; null: made afresh
  bool measure_sensitivity = false;  // a probe's sensitivity check (probe/sensitivity.h) is measured
};

// A cell that ended as crashed or timeout inside its worker (a collective's other rank crashed or hung):
// the observation takes the status and the message.
class CellFailure : public std::runtime_error {
 public:
  CellFailure(ObservationStatus status, const std::string& message) : std::runtime_error(message), status_(status) {}
  ObservationStatus status() const { return status_; }

 private:
  ObservationStatus status_;
};

// What a kind keeps of one run until its digest is taken.
struct RunExtras {
  virtual ~RunExtras() = default;
};

class CellRunner {
 public:
  virtual ~CellRunner() = default;
  // The cell's op with its inputs made (observation.input_digest set); throws Unsupported or another
  // std::exception, which ends the cell.
  virtual RunFunction prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) = 0;
  // Whether it makes its kind's extra runs after the determinism runs (kind/cell_kind.h: extra_runs).
  virtual bool makes_extra_runs() const { return false; }
  // Whether the cell's share of --budget may end its runs early.
  virtual bool budget_applies() const { return true; }
  // How many runs may wait for their digest behind the one in flight, given the copier's depth.
  virtual int pipeline_depth(int copier_depth) const { return copier_depth; }
  // Before every run of the cell, determinism and timing-only runs alike, outside its timed, traced and
  // recorded span: what a run needs done first that is not its op's work (a model's state put back).
  virtual void before_run() {}
  // Right before run `index`'s timed span (`extra`: one of the extra runs); what end_run returns comes
  // back to account() with the run's digest.
  virtual void begin_run(int /*index*/, bool /*extra*/, const ProcessObservation&) {}
  virtual std::unique_ptr<RunExtras> end_run() { return nullptr; }
  // Run `index` was digested (`run`: its observation, not yet kept): what the kind measures of it.
  // `reference`: run 0's outputs (empty while run 0 is accounted); `kernels`: what the run launched.
  virtual void account(int /*index*/, const Digested& /*digested*/, RunObservation& /*run*/, RunExtras* /*extras*/,
                       const std::vector<KernelRecord>& /*kernels*/, const std::vector<at::Tensor>& /*reference*/,
                       ProcessObservation& /*observation*/) {}
  // Run 0's outputs as the reference the later runs are measured against.
  virtual std::vector<at::Tensor> keep_reference(const std::vector<at::Tensor>& outputs) const { return outputs; }
  // `repro`'s export-inputs: the cell's inputs saved as `directory`/inputs.pt and described
  // (runners/input_export.h); `origin_start` >= 0 also captures the op a model's divergence starts at.
  virtual nlohmann::json export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                                       std::int64_t origin_start) const = 0;
};

// The runner of the cell's kind, fresh for one cell in one process.
std::unique_ptr<CellRunner> make_cell_runner(const Cell& cell);

}  // namespace repro_audit
