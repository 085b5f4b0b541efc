#include "worker/worker.h"

#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <tuple>
#include <unordered_map>

#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "protocol/observation_json.h"
#include "worker/digest_pipeline.h"
#include "worker/environment.h"
#include "worker/model_runner.h"
#include "worker/op_recorder.h"
#include "worker/probe.h"
#include "worker/settings_apply.h"

namespace repro_audit {
namespace {

// Keeps every distinct warning raised on this thread while a cell runs (warn-only mode's alerts).
class WarningCollector : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    const auto text = warning.msg();
    if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) warnings.push_back(text);
  }
  std::vector<std::string> warnings;
};

std::string error_text(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// An invariance probe's outputs that differ from its reference (output 0), measured against it.
void measure_variations(const Digested& digested, ProcessObservation& observation) {
  const auto& names = digested.run.outputs;
  for (std::size_t i = 1; i < names.size(); ++i)
    if (names[i].second != names.front().second)
      observation.variations.push_back(
          compare_tensors(digested.names[i], 0, digested.canonical.front(), digested.canonical[i]));
}

void keep_sequence(ProcessObservation& observation, const std::string& digest, std::vector<KernelRecord>&& kernels) {
  for (const auto& [seen, _] : observation.kernel_sequences)
    if (seen == digest) return;
  observation.kernel_sequences.emplace_back(digest, std::move(kernels));
}

// Run k's per-op records against run 0's: keeps the distinct sequence, and measures the origin
// op's output against run 0 the first time a run parts from it.
struct PerOpState {
  std::unique_ptr<OpRecorder> recorder;
  RecordedRun reference;
  std::string reference_digest;
};

constexpr std::size_t kKeptOutputBytes = std::size_t{256} << 20;

void keep_ops(ProcessObservation& observation, RunObservation& run, RecordedRun&& recorded, int index,
              PerOpState& per_op, std::vector<KernelRecord>& kernels) {
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

struct Prepared {
  RunFunction run;
  Invariance invariance = Invariance::none;
};

// One run as the determinism runs make it (seeded, synchronized, traced, timed), without a digest.
std::int64_t timed_run(const RunFunction& run, const at::Device& device, std::uint64_t seed, Tracer& tracer,
                       RunTimer& timer) {
  at::manual_seed(seed);
  synchronize(device);
  tracer.begin_run();
  timer.start();
  { const auto outputs = run(); }
  const auto elapsed_ns = timer.stop_ns();
  synchronize(device);
  tracer.end_run();
  return elapsed_ns;
}

// Timing-only runs after the determinism runs, until the timing rule is met (timing/timing.h). The
// rule is checked at geometrically spaced sample counts, so checking costs nothing next to the runs.
// Reaching the minimum number of samples never takes longer than the determinism runs took: a slow op
// audited with few repeats is not run for minutes to fill an interval.
// `later_round`: a later timing round, which has no determinism runs and takes its minimum whatever it costs.
void time_until_done(const RunFunction& run, const TimingRule& rule, const at::Device& device, std::uint64_t seed,
                     Tracer& tracer, RunTimer& timer, ProcessObservation& observation, bool later_round = false) {
  std::vector<std::int64_t> samples;
  double determinism_seconds = later_round ? HUGE_VAL : 0;
  for (const auto& done : observation.runs) {
    determinism_seconds += static_cast<double>(done.time_ns) / 1e9;
    if (!done.warmup && !done.per_op) samples.push_back(done.time_ns);
  }
  const auto started = std::chrono::steady_clock::now();
  std::size_t next_check = 0;
  while (true) {
    const auto spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (spent >= rule.budget_seconds &&
        (static_cast<int>(samples.size()) >= rule.min_samples || spent >= determinism_seconds))
      break;
    if (samples.size() >= next_check && timing_done(samples, rule, spent)) break;
    if (samples.size() >= next_check) next_check = samples.size() + std::max<std::size_t>(1, samples.size() / 8);
    samples.push_back(timed_run(run, device, seed, tracer, timer));
    observation.timing_ns.push_back(samples.back());
  }
}

Prepared prepare_cell(const Cell& cell, const at::Device& device, std::uint64_t seed, InputScheme scheme,
                      Tracer& tracer, ProcessObservation& observation, PerOpState& per_op, InputCache* inputs) {
  if (cell.model) {
    VariantInfo variant;
    variant.name = cell.variant;
    ProbeContext context(device, seed, variant, nullptr, scheme);
    auto prepared = prepare_model(*cell.model, context);
    observation.input_digest = context.input_digest();
    if (cell.model->per_op) {
      if (prepared.per_op_unavailable.empty())
        per_op.recorder = std::make_unique<OpRecorder>(&tracer);
      else
        observation.per_op_unavailable = prepared.per_op_unavailable;
    }
    return {prepared.run, Invariance::none};
  }
  const auto* probe = find_registered_probe(cell.probe);
  if (!probe) throw std::runtime_error("this worker has no probe '" + cell.probe + "'");
  const auto* variant = probe->info.find_variant(cell.variant);
  if (!variant) throw std::runtime_error("probe '" + cell.probe + "' has no variant '" + cell.variant + "'");
  const auto kind = device.is_cuda() ? "cuda" : "cpu";
  if (std::find(variant->devices.begin(), variant->devices.end(), kind) == variant->devices.end())
    throw Unsupported(variant->unsupported_reason.empty() ? std::string("no implementation on ") + kind
                                                          : variant->unsupported_reason);
  ProbeContext context(device, seed, *variant, inputs, scheme);
  auto run = probe->prepare(context);
  observation.input_digest = context.input_digest();
  return {run, probe->info.invariance};
}

void run_all(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
             ProcessObservation& observation, InputCache* inputs, OutputCopier* given_copier) {
  const at::Device device(request.device);
  const auto seed = static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed")));
  PerOpState per_op;
  const auto prepared = prepare_cell(cell, device, seed, request.input_scheme, tracer, observation, per_op, inputs);
  std::vector<at::Tensor> reference;
  // With per-op records, the runs that digest every op are followed by runs that do not, timed
  // apart: the model's own time, and what the per-op digests cost.
  const int plain_runs = per_op.recorder ? std::max(1, (request.repeats + 1) / 2) : 0;
  const int total = request.warmup + request.repeats + plain_runs;
  // A probe's runs stop at the first digest that differs from run 0's: the verdict is certain, and more
  // runs add nothing to it. Model cells and invariance probes keep every run for what they measure.
  const bool may_stop_early = !cell.model && prepared.invariance == Invariance::none;
  const auto started = std::chrono::steady_clock::now();
  const auto spent = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  // What a run leaves besides its outputs, until its digest is taken.
  struct Ran {
    int index = 0;
    std::int64_t elapsed_ns = 0;
    RecordedRun recorded;
    std::vector<KernelRecord> kernels;
    bool recording = false;
  };
  // A run's digest, what it shows, and whether the runs stop after it.
  const auto account = [&](Digested digested, Ran ran) {
    const int index = ran.index;
    digested.run.warmup = index < request.warmup;
    digested.run.time_ns = ran.elapsed_ns;
    if (ran.recording) keep_ops(observation, digested.run, std::move(ran.recorded), index, per_op, ran.kernels);
    if (observation.trace_unavailable.empty()) {
      digested.run.kernel_digest = kernel_sequence_digest(ran.kernels);
      keep_sequence(observation, digested.run.kernel_digest, std::move(ran.kernels));
    }
    if (index == 0) {
      reference = digested.canonical;
      if (cell.model)
        for (auto& tensor : reference) tensor = tensor.clone();  // a model's output may alias its parameters
      if (prepared.invariance != Invariance::none) measure_variations(digested, observation);
    } else {
      if (cell.model) measure_output_differences(digested, observation.runs.front(), reference, index, observation);
      if (!observation.divergence && digested.run.digest != observation.runs.front().digest) {
        for (std::size_t i = 0; i < digested.canonical.size(); ++i)
          if (digested.run.outputs[i].second != observation.runs.front().outputs[i].second) {
            observation.divergence = compare_tensors(digested.names[i], index, reference[i], digested.canonical[i]);
            break;
          }
      }
    }
    observation.runs.push_back(std::move(digested.run));
    if (may_stop_early && index > 0 && index + 1 < total &&
        observation.runs.back().digest != observation.runs.front().digest) {
      observation.stopped_early = true;
      return true;
    }
    // Under --budget: at least kMinimumRepeats after warm-up, then no more once the share is spent.
    if (cell.budget_seconds > 0 && !per_op.recorder && index + 1 < total &&
        index + 1 >= request.warmup + kMinimumRepeats && spent() >= cell.budget_seconds) {
      observation.budget_limited = true;
      return true;
    }
    return false;
  };
  // On a GPU, run i's digest is taken after run i+1 is launched (worker/digest_pipeline.h); a model's
  // outputs may alias what its next run restores, so its runs are digested one by one.
  const auto own_copier = given_copier ? nullptr : make_output_copier(device);
  auto& copier = given_copier ? *given_copier : *own_copier;
  DigestPipeline<Ran> pipeline(copier, cell.model ? 0 : copier.depth());
  bool stop = false;
  for (int index = 0; index < total && !stop; ++index) {
    Ran ran;
    ran.index = index;
    ran.recording = per_op.recorder && index < request.warmup + request.repeats;
    at::manual_seed(seed);  // ops that draw random numbers (fractional pooling) draw the same ones
    synchronize(device);
    tracer.begin_run();
    if (ran.recording) per_op.recorder->begin_run(index == 0 || !observation.origin_difference ? kKeptOutputBytes : 0);
    timer.start();
    const auto outputs = prepared.run();
    // The previous run's digest while this one executes; the digest may stop the runs after this one.
    if (pipeline.depth() > 0 && pipeline.has_pending() && std::apply(account, pipeline.collect())) stop = true;
    ran.elapsed_ns = timer.stop_ns();
    if (ran.recording) ran.recorded = per_op.recorder->end_run();
    synchronize(device);
    ran.kernels = tracer.end_run();
    pipeline.submit(outputs, std::move(ran));
    while (pipeline.over_depth())
      if (std::apply(account, pipeline.collect())) stop = true;
  }
  while (pipeline.has_pending()) std::apply(account, pipeline.collect());
  if (cell.model) return;
  auto rule = request.timing;
  rule.budget_seconds = rule.round_budget();  // the first of the timing rounds
  if (request.process > 0) {                  // one process's timing-only runs time the cell; the others add digests
    rule.budget_seconds = 0;
    rule.min_samples = 0;
  }
  if (cell.budget_seconds > 0) {  // timing-only runs only from what is left of the share, however few
    rule.budget_seconds = std::min(rule.budget_seconds, std::max(0.0, cell.budget_seconds - spent()));
    rule.min_samples = 0;
  }
  time_until_done(prepared.run, rule, device, seed, tracer, timer, observation);
}

// A later timing round of a cell (timing/timing.h): its inputs drawn as before, the warm-up runs, then
// timing-only runs for the round's share of the budget, and at least the round's minimum.
void time_round(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                ProcessObservation& observation, InputCache* inputs) {
  const at::Device device(request.device);
  const auto seed = static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed")));
  PerOpState per_op;
  const auto prepared = prepare_cell(cell, device, seed, request.input_scheme, tracer, observation, per_op, inputs);
  for (int i = 0; i < request.warmup; ++i) timed_run(prepared.run, device, seed, tracer, timer);
  auto rule = request.timing;
  rule.budget_seconds = rule.round_budget();
  rule.min_samples = rule.round_min_samples;
  time_until_done(prepared.run, rule, device, seed, tracer, timer, observation, true);
  observation.timing_rounds = request.timing_round;
}

}  // namespace

ProcessObservation run_cell(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                            InputCache* inputs, OutputCopier* copier) {
  ProcessObservation observation;
  observation.process = request.process;
  observation.trace_unavailable = tracer.unavailable_reason();
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard guard(&collector);
  try {
    apply_cell_settings(cell.settings);
    if (request.timing_round > 1)
      time_round(cell, request, tracer, timer, observation, inputs);
    else
      run_all(cell, request, tracer, timer, observation, inputs, copier);
  } catch (const Unsupported& unsupported) {
    observation = ProcessObservation{};
    observation.trace_unavailable = tracer.unavailable_reason();
    observation.status = ObservationStatus::unsupported;
    observation.message = unsupported.what();
  } catch (const std::exception& error) {
    observation.runs.clear();
    observation.divergence.reset();
    observation.variations.clear();
    observation.kernel_sequences.clear();
    observation.op_sequences.clear();
    observation.output_differences.clear();
    observation.origin_difference.reset();
    observation.timing_ns.clear();
    observation.stopped_early = false;
    observation.status = ObservationStatus::exception;
    observation.message = error_text(error);
  }
  observation.process = request.process;
  observation.warnings = collector.warnings;
  return observation;
}

void run_worker(const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                const std::function<void(const nlohmann::json&)>& emit, bool environment_sent) {
  // Fingerprint first, so `threads` is libtorch's own default on this machine.
  if (!environment_sent) emit(environment_event(environment_fingerprint()));
  apply_process_settings(request.process_settings);
  ProcessObservation skipped;
  skipped.process = request.process;
  skipped.status = ObservationStatus::unsupported;
  skipped.message = unhonoured_process_setting(request.process_settings);
  // A variant's cells are neighbours in the batch: its inputs are drawn once and kept until the next
  // variant (or seed) comes.
  InputCache inputs;
  std::string inputs_of;
  for (const auto& cell : request.cells) {
    const auto variant = cell.probe + "/" + cell.variant + " seed " + cell.settings.at("seed");
    if (variant != inputs_of) inputs.clear();
    inputs_of = variant;
    emit(start_event(cell.key));
    emit(cell_event(cell.key, skipped.message.empty() ? run_cell(cell, request, tracer, timer, &inputs) : skipped));
  }
  emit(done_event());
}

}  // namespace repro_audit
