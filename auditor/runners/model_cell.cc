#include "runners/model_cell.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "hash/tensor_digest.h"
#include "models/model_runner.h"
#include "recording/op_recorder.h"
#include "recording/tensor_digester.h"
#include "runners/input_export.h"
#include "verdict/origin.h"

namespace repro_audit {
namespace {

// Run k's per-op records against run 0's: keeps the distinct sequence, and measures the origin
// op's output against run 0 the first time a run parts from it.
struct PerOpState {
  std::unique_ptr<OpRecorder> recorder;
  RecordedRun reference;
  std::string reference_digest;
  bool parted = false;  // a run's sequence parted from the reference's
};

constexpr std::size_t kKeptOutputBytes = std::size_t{256} << 20;

void keep_ops(ProcessObservation& observation, RunObservation& run, RecordedRun&& recorded, int index,
              PerOpState& per_op, const std::vector<KernelRecord>& kernels) {
  std::unordered_map<std::int64_t, std::size_t> by_start;
  for (std::size_t i = 0; i < recorded.ops.size(); ++i) by_start[recorded.ops[i].start] = i;
  for (const auto& kernel : kernels)
    if (auto it = by_start.find(kernel.op); kernel.op >= 0 && it != by_start.end())
      recorded.ops[it->second].kernels.push_back(kernel.name);
  run.op_digest = op_sequence_digest(recorded.ops);
  run.per_op = true;
  const bool seen = std::any_of(observation.op_sequences.begin(), observation.op_sequences.end(),
                                [&](const OpSequence& sequence) { return sequence.digest == run.op_digest; });
  if (!seen && observation.op_sequences.size() < kMaxOpSequences)
    observation.op_sequences.push_back({run.op_digest, recorded.ops, recorded.truncated});
  if (index == 0) {
    per_op.reference = std::move(recorded);
    per_op.reference_digest = run.op_digest;
    return;
  }
  if (run.op_digest != per_op.reference_digest) per_op.parted = true;
  if (observation.origin_difference || run.op_digest == per_op.reference_digest) return;
  const auto comparison = compare_op_sequences(per_op.reference.ops, recorded.ops);
  if (!comparison.origin) return;
  const auto at = comparison.origin->position;
  for (const auto& [i, j] : comparison.matched) {
    if (i != at) continue;
    const auto& a = per_op.reference.kept[i];
    const auto& b = recorded.kept[j];
    for (std::size_t t = 0; t < a.size() && t < b.size(); ++t) {
      auto measured = compare_tensors(fmt::format("#{} {}", at, comparison.origin->op), index, a[t], b[t]);
      if (measured.differing_elements > 0) {
        observation.origin_difference = measured;
        return;
      }
    }
  }
}

// Every output of a model run that differs from run 0, with its largest difference over the runs.
void measure_output_differences(const Digested& digested, const RunObservation& first,
                                const std::vector<at::Tensor>& reference, int index, ProcessObservation& observation) {
  for (std::size_t i = 0; i < digested.names.size() && i < reference.size() && i < first.outputs.size(); ++i) {
    if (digested.run.outputs[i].second == first.outputs[i].second) continue;
    auto measured = compare_tensors(digested.names[i], index, reference[i], digested.canonical[i]);
    auto it = std::find_if(observation.output_differences.begin(), observation.output_differences.end(),
                           [&](const Divergence& d) { return d.output == measured.output; });
    if (it == observation.output_differences.end())
      observation.output_differences.push_back(measured);
    else if (measured.max_abs_difference > it->max_abs_difference)
      *it = measured;
  }
}

struct RecordedExtras : RunExtras {
  RecordedRun recorded;
};

class ModelRunner : public CellRunner {
 public:
  RunFunction prepare(const Cell& cell, const CellSetup& setup, ProcessObservation& observation) override {
    VariantInfo variant;
    variant.name = cell.variant;
    ProbeContext context(setup.device, setup.seed, variant, nullptr, setup.scheme);
    auto prepared = prepare_model(*cell.model, context);
    restore_ = prepared.restore;
    observation.input_digest = context.input_digest();
    if (cell.model->per_op) {
      if (prepared.per_op_unavailable.empty())
        per_op_.recorder = std::make_unique<OpRecorder>(setup.tracer, make_tensor_digester(setup.device));
      else
        observation.per_op_unavailable = prepared.per_op_unavailable;
    }
    return prepared.run;
  }
  // The model's state put back before each run, outside its timing (a run's time is the model's work).
  void before_run() override {
    if (restore_) restore_();
  }
  // The runs without per-op digests follow those with them, where those are made.
  bool makes_extra_runs() const override { return per_op_.recorder != nullptr; }
  bool budget_applies() const override { return !per_op_.recorder; }
  // A model's outputs may alias what its next run restores: its runs are digested one by one.
  int pipeline_depth(int) const override { return 0; }
  void begin_run(int index, bool extra, const ProcessObservation& observation) override {
    recording_ = per_op_.recorder && !extra;
    if (!recording_) return;
    // Run 0 keeps a copy of every op's outputs; a later run compared with it as it records, only of the
    // op where it parts from run 0. Digested on a device, a run compared as it records waits for the
    // device at every op: later runs are compared only once one has parted from run 0, until the
    // origin's difference is measured (a race seen once is seen again in the next runs).
    const bool first = index == 0 || per_op_.reference_digest.empty();
    const bool compare =
        !first && !observation.origin_difference && (!per_op_.recorder->digests_on_device() || per_op_.parted);
    if (first || compare)
      per_op_.recorder->begin_run(kKeptOutputBytes, first ? nullptr : &per_op_.reference);
    else
      per_op_.recorder->begin_run(0, nullptr);
  }
  std::unique_ptr<RunExtras> end_run() override {
    if (!recording_) return nullptr;
    auto extras = std::make_unique<RecordedExtras>();
    extras->recorded = per_op_.recorder->end_run();
    return extras;
  }
  void account(int index, const Digested& digested, RunObservation& run, RunExtras* extras,
               const std::vector<KernelRecord>& kernels, const std::vector<at::Tensor>& reference,
               ProcessObservation& observation) override {
    if (auto* recorded = dynamic_cast<RecordedExtras*>(extras))
      keep_ops(observation, run, std::move(recorded->recorded), index, per_op_, kernels);
    if (index > 0) measure_output_differences(digested, observation.runs.front(), reference, index, observation);
  }
  // A model's output may alias its parameters: the reference is a copy.
  std::vector<at::Tensor> keep_reference(const std::vector<at::Tensor>& outputs) const override {
    std::vector<at::Tensor> copies;
    for (const auto& tensor : outputs) copies.push_back(tensor.clone());
    return copies;
  }
  nlohmann::json export_inputs(const Cell& cell, InputScheme scheme, const std::string& directory,
                               std::int64_t origin_start) const override {
    return export_model_cell(cell, scheme, directory, origin_start);
  }

 private:
  PerOpState per_op_;
  std::function<void()> restore_;
  bool recording_ = false;
};

}  // namespace

std::unique_ptr<CellRunner> make_model_runner() { return std::make_unique<ModelRunner>(); }

}  // namespace repro_audit
