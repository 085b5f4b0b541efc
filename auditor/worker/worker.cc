#include "worker/worker.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <tuple>

#include "apply/settings_apply.h"
#include "common/user_error.h"
#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "kind/cell_kind.h"
#include "probe/probe.h"
#include "probe/probe_catalogue.h"
#include "protocol/observation_json.h"
#include "recording/digest_pipeline.h"
#include "runners/cell_runner.h"
#include "verdict/cell_runs.h"
#include "worker/environment.h"
#include "common/phase_log.h"

namespace repro_audit {
namespace {

// The first kKeptWarnings distinct warnings raised on this thread while a cell runs, and a count of the rest.
class WarningCollector : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    const auto text = warning.msg();
    if (std::find(warnings.begin(), warnings.end(), text) != warnings.end()) return;
    warnings.size() < kKeptWarnings ? warnings.push_back(text) : void(++not_kept);
  }
  std::vector<std::string> warnings;
  std::size_t not_kept = 0;
};

std::string error_text(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

void keep_sequence(ProcessObservation& observation, const std::string& digest, std::vector<KernelRecord>&& kernels) {
  for (const auto& [seen, _] : observation.kernel_sequences)
    if (seen == digest) return;
  observation.kernel_sequences.emplace_back(digest, std::move(kernels));
}

// A timing-only run: seeded and synchronized as the determinism runs are, neither traced nor digested.
std::int64_t timed_run(const RunFunction& run, CellRunner& runner, const at::Device& device, std::uint64_t seed,
                       RunTimer& timer) {
  runner.before_run();
  at::manual_seed(seed);
  synchronize(device);
  timer.start_timed();
  { const auto outputs = run(); }
  const auto elapsed_ns = timer.stop_ns();
  synchronize(device);
  return elapsed_ns;
}

// A run neither timed nor digested: what a process does once (loading kernels, handles) is done before timing.
void untimed_run(const RunFunction& run, CellRunner& runner, const at::Device& device, std::uint64_t seed) {
  runner.before_run();
  at::manual_seed(seed);
  synchronize(device);
  { const auto outputs = run(); }
  synchronize(device);
}

// Untimed runs before the timing-only ones on a GPU, whose caches and clocks settle on the op within a few.
constexpr int kGpuSettlingRuns = 3;

// Timing-only runs after the determinism runs until the timing rule is met (timing/timing.h), checked at
// geometrically spaced sample counts. Reaching the minimum number of samples never takes longer than the
// determinism runs took: a slow op audited with few repeats is not run for minutes to fill an interval.
// `later_round`: a later timing round, which has no determinism runs and takes its minimum whatever it costs.
void time_until_done(const RunFunction& run, CellRunner& runner, const TimingRule& rule, const at::Device& device,
                     std::uint64_t seed, Tracer& tracer, RunTimer& timer, ProcessObservation& observation,
                     bool later_round = false) {
  struct Paused {  // no tracing while timing-only runs run, however they end
    Tracer& tracer;
    explicit Paused(Tracer& t) : tracer(t) {
      const PhaseScope phase(Phase::pause);
      tracer.pause();
    }
    ~Paused() {
      const PhaseScope phase(Phase::resume);
      tracer.resume();
    }
  } paused(tracer);
  const PhaseScope timing_phase(Phase::timing);
  std::vector<std::int64_t> samples;
  double determinism_seconds = later_round ? HUGE_VAL : 0;
  for (const auto& done : observation.runs) determinism_seconds += static_cast<double>(done.time_ns) / 1e9;
  const auto started = std::chrono::steady_clock::now();
  if (device.is_cuda() && (rule.budget_seconds > 0 || rule.min_samples > 0))
    for (int i = 0; i < kGpuSettlingRuns; ++i) timed_run(run, runner, device, seed, timer);
  std::vector<int> clocks;
  std::size_t next_check = 0;
  while (true) {
    const auto spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (spent >= rule.budget_seconds &&
        (static_cast<int>(samples.size()) >= rule.min_samples || spent >= determinism_seconds))
      break;
    if (samples.size() >= next_check && timing_done(samples, rule, spent)) break;
    if (samples.size() >= next_check) next_check = samples.size() + std::max<std::size_t>(1, samples.size() / 8);
    const auto sample = timed_run(run, runner, device, seed, timer);
    if (timer.last_hold_gave_up()) continue;  // it timed the wait for the hold, not the op
    samples.push_back(sample);
    observation.timing_ns.push_back(samples.back());
    clocks.push_back(timer.clock_mhz());
  }
  // Clocks go with the samples where any was read; padded where an earlier round read none.
  const bool any_clock = std::any_of(clocks.begin(), clocks.end(), [](int clock) { return clock > 0; });
  if (any_clock || !observation.timing_clock_mhz.empty()) {
    observation.timing_clock_mhz.resize(observation.timing_ns.size() - clocks.size(), 0);
    observation.timing_clock_mhz.insert(observation.timing_clock_mhz.end(), clocks.begin(), clocks.end());
  }
  if (const auto note = timer.timed_region_note(); !note.empty()) observation.warnings.push_back(note);
}

// A cell's determinism runs, its kind's runner measuring what the kind adds, then its first round's timing.
void run_all(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
             ProcessObservation& observation, InputCache* inputs, OutputCopier* given_copier) {
  // One process measures what is a property of the inputs alone, unless another batch's does.
  const CellSetup setup{at::Device(request.device),
                        static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed"))),
                        request.input_scheme,
                        &tracer,
                        inputs,
                        request.process == request.sensitivity_process &&
                            std::find(request.sensitivity_elsewhere.begin(), request.sensitivity_elsewhere.end(),
                                      cell.key) == request.sensitivity_elsewhere.end()};
  const auto& device = setup.device;
  const auto seed = setup.seed;
  const auto& kind = kind_of(cell);
  const auto runner = make_cell_runner(cell);
  const auto run = [&] {
    const PhaseScope phase(Phase::prepare);
    return runner->prepare(cell, setup, observation);
  }();
  std::vector<at::Tensor> reference;
  // A cell documented as possibly diverging runs on while its runs agree (verdict/cell_runs.h).
  static const Catalogue catalogue = registered_catalogue();
  const int repeats = cell_repeats(cell, catalogue, request.repeats, request.quiet_runs);
  const int determinism_runs = request.warmup + repeats;
  const int total = determinism_runs + (runner->makes_extra_runs() ? kind.extra_runs(cell, repeats) : 0);
  // A probe's runs stop at the first digest that differs from run 0's: the verdict is certain, and more
  // runs add nothing to it. Kinds that measure every run (models, invariance probes) keep them all.
  const bool may_stop_early = kind.stops_at_first_difference();
  const auto started = std::chrono::steady_clock::now();
  const auto spent = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  // What a run leaves besides its outputs, until its digest is taken.
  struct Ran {
    int index = 0;
    std::int64_t elapsed_ns = 0;
    std::vector<KernelRecord> kernels;
    std::unique_ptr<RunExtras> extras;  // what the kind keeps of it
  };
  // A run's digest, what it shows, and whether the runs stop after it.
  const auto account = [&](Digested digested, Ran ran) {
    const int index = ran.index;
    digested.run.warmup = index < request.warmup;
    digested.run.time_ns = ran.elapsed_ns;
    runner->account(index, digested, digested.run, ran.extras.get(), ran.kernels, reference, observation);
    if (observation.trace_unavailable.empty()) {
      digested.run.kernel_digest = kernel_sequence_digest(ran.kernels);
      keep_sequence(observation, digested.run.kernel_digest, std::move(ran.kernels));
    }
    if (index == 0) {
      reference = runner->keep_reference(digested.canonical);
    } else if (!observation.divergence && digested.run.digest != observation.runs.front().digest) {
      for (std::size_t i = 0; i < digested.canonical.size(); ++i)
        if (digested.run.outputs[i].second != observation.runs.front().outputs[i].second) {
          observation.divergence = compare_tensors(digested.names[i], index, reference[i], digested.canonical[i]);
          break;
        }
    }
    observation.runs.push_back(std::move(digested.run));
    if (may_stop_early && index > 0 && index + 1 < total &&
        observation.runs.back().digest != observation.runs.front().digest) {
      observation.stopped_early = true;
      return true;
    }
    // Under --budget: at least kMinimumRepeats after warm-up, then no more once the share is spent.
    if (cell.budget_seconds > 0 && runner->budget_applies() && index + 1 < total &&
        index + 1 >= request.warmup + kMinimumRepeats && spent() >= cell.budget_seconds) {
      observation.budget_limited = true;
      return true;
    }
    return false;
  };
  // On a GPU, run i is digested after run i+1 is launched (recording/digest_pipeline.h), unless the kind says not.
  const auto own_copier = given_copier ? nullptr : make_output_copier(device);
  auto& copier = given_copier ? *given_copier : *own_copier;
  DigestPipeline<Ran> pipeline(copier, runner->pipeline_depth(copier.depth()));
  bool stop = false;
  for (int index = 0; index < total && !stop; ++index) {
    Ran ran;
    ran.index = index;
    {
      const PhaseScope phase(Phase::begin_run);
      runner->before_run();
    }
    at::manual_seed(seed);  // ops that draw random numbers (fractional pooling) draw the same ones
    synchronize(device);
    {
      const PhaseScope phase(Phase::begin_run);
      tracer.begin_run();
      runner->begin_run(index, index >= determinism_runs, observation);
    }
    timer.start();
    std::optional<PhaseScope> run_phase(std::in_place, Phase::run);
    const auto outputs = run();
    run_phase.reset();
    // The previous run's digest while this one executes; the digest may stop the runs after this one.
    if (pipeline.depth() > 0 && pipeline.has_pending()) {
      const PhaseScope phase(Phase::collect);
      if (std::apply(account, pipeline.collect())) stop = true;
    }
    ran.elapsed_ns = timer.stop_ns();
    {
      const PhaseScope phase(Phase::end_run);
      ran.extras = runner->end_run();
      synchronize(device);
      ran.kernels = tracer.end_run();
    }
    const PhaseScope phase(Phase::submit);
    pipeline.submit(outputs, std::move(ran));
    while (pipeline.over_depth())
      if (std::apply(account, pipeline.collect())) stop = true;
  }
  while (pipeline.has_pending()) std::apply(account, pipeline.collect());
  if (!kind.has_timing_runs()) return;
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
  time_until_done(run, *runner, rule, device, seed, tracer, timer, observation);
}

// A later timing round of a cell (timing/timing.h): inputs drawn as before, warm-up, then timing-only runs
// for the round's share of the budget, and at least the round's minimum.
void time_round(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                ProcessObservation& observation, InputCache* inputs) {
  const CellSetup setup{at::Device(request.device), static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed"))),
                        request.input_scheme, &tracer, inputs};
  const auto runner = make_cell_runner(cell);  // alive while its run is (a collective's ranks)
  const auto run = [&] {
    const PhaseScope phase(Phase::prepare);
    return runner->prepare(cell, setup, observation);
  }();
  {
    const PhaseScope phase(Phase::pause);
    tracer.pause();  // a later round traces nothing
  }
  // Its warm-up runs as round 1's determinism runs do, without holding the stream: a fresh process's
  // first runs load the op's kernels and make its libraries' handles, which wait for the GPU, and
  // behind a hold they waited it out, so that the cell was timed without one (launch-bound times, 2-6x
  // the kernels' own on an H100). At least one such run, whatever the warm-up.
  {
    const PhaseScope phase(Phase::warmup);
    for (int i = 0; i < std::max(1, request.warmup); ++i) untimed_run(run, *runner, setup.device, setup.seed);
  }
  auto rule = request.timing;
  rule.budget_seconds = rule.round_budget();
  rule.min_samples = rule.round_min_samples;
  time_until_done(run, *runner, rule, setup.device, setup.seed, tracer, timer, observation, true);
  observation.timing_rounds = request.timing_round;
}

// A cell that ended in an error: nothing of its partial runs is kept, only why it ended.
ProcessObservation failed_observation(const Tracer& tracer, ObservationStatus status, const std::string& message) {
  ProcessObservation observation;
  observation.trace_unavailable = tracer.unavailable_reason();
  observation.status = status;
  observation.message = message;
  return observation;
}

}  // namespace

ProcessObservation run_cell(const Cell& cell, const WorkerRequest& request, Tracer& tracer, RunTimer& timer,
                            InputCache* inputs, OutputCopier* copier) {
  ProcessObservation observation;
  observation.process = request.process;
  observation.trace_unavailable = tracer.unavailable_reason();
  // TORCH_WARN_ONCE (sdpa's backward under warn-only) warns every cell, not only a worker's first: else a
  // cell's `warns` would depend on how the audit split its cells between workers.
  c10::WarningUtils::set_warnAlways(true);
  WarningCollector collector;
  c10::WarningUtils::WarningHandlerGuard guard(&collector);
  timer.begin_cell();
  std::optional<PhaseScope> cell_phase(std::in_place, Phase::cell);
  try {
    apply_cell_settings(cell.settings);
    if (request.timing_round > 1)
      time_round(cell, request, tracer, timer, observation, inputs);
    else
      run_all(cell, request, tracer, timer, observation, inputs, copier);
  } catch (const Unsupported& unsupported) {
    observation = failed_observation(tracer, ObservationStatus::unsupported, unsupported.what());
  } catch (const CellFailure& failure) {
    observation = failed_observation(tracer, failure.status(), failure.what());
  } catch (const EnvironmentError&) {
    throw;  // the machine's failure, not the cell's: the worker says so and ends (worker/worker.h)
  } catch (const std::exception& error) {
    observation = failed_observation(tracer, ObservationStatus::exception, error_text(error));
  }
  observation.process = request.process;
  // The worker's own warnings (how the cell was timed) first: past the cap, libtorch's are counted.
  auto warnings = std::move(observation.warnings);
  for (const auto& warning : collector.warnings)
    if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) warnings.push_back(warning);
  observation.warnings = bounded_warnings(std::move(warnings), collector.not_kept);
  cell_phase.reset();
  flush_phase_log(cell.key, std::max(1, request.timing_round));
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
  try {
    for (const auto& cell : request.cells) {
      const auto variant = cell.probe + "/" + cell.variant + " seed " + cell.settings.at("seed");
      if (variant != inputs_of) inputs.clear();
      inputs_of = variant;
      emit(start_event(cell.key));
      emit(cell_event(cell.key, skipped.message.empty() ? run_cell(cell, request, tracer, timer, &inputs) : skipped));
    }
  } catch (const EnvironmentError& error) {
    emit(environment_failure_event(error.what()));
    throw;
  }
  emit(done_event());
}

}  // namespace repro_audit
