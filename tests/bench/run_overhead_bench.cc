// What tracing and timing add per run on the CPU. Each benchmark iteration is one cell of 20 runs
// (1 warm-up + 19 timed); compare the variants of the same probe:
//   untraced  no tracer, a timer that reads no clock
//   timed     the steady-clock timer only
//   traced    RecordFunction tracer and steady-clock timer
//   library   RecordFunction plus oneDNN/MKL verbose capture (make_tracer("cpu")), as the worker runs
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>

#include "apply/settings_apply.h"
#include "config/settings.h"
#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "probe/probe.h"
#include "recording/digest_pipeline.h"
#include "trace/library_verbose_tracer.h"
#include "trace/record_function_tracer.h"
#include "trace/steady_clock_timer.h"
#include "worker/worker.h"

namespace repro_audit {
namespace {

class NoClock : public RunTimer {
 public:
  void start() override {}
  std::int64_t stop_ns() override { return 0; }
};

Cell make_cell(const std::string& probe, const std::string& variant) {
  Cell cell;
  cell.probe = probe;
  cell.variant = variant;
  cell.device = "cpu";
  cell.settings = make_flag_set({{"threads", "1"}}, "cpu");
  cell.key = cell_key(probe, variant, "cpu", cell.settings);
  return cell;
}

enum class Mode { untraced, timed, traced, library };

void run_cells(benchmark::State& state, const char* probe, const char* variant, Mode mode) {
  apply_process_settings({{"threads", "1"}});
  WorkerRequest request;
  request.warmup = 1;
  request.repeats = 19;
  const auto cell = make_cell(probe, variant);
  NullTracer null_tracer("off");
  std::unique_ptr<Tracer> traced;
  if (mode == Mode::traced) traced = make_record_function_tracer();
  if (mode == Mode::library) traced = make_library_verbose_tracer(make_record_function_tracer());
  Tracer& tracer = traced ? *traced : null_tracer;
  NoClock no_clock;
  SteadyClockTimer clock;
  RunTimer& timer = mode == Mode::untraced ? static_cast<RunTimer&>(no_clock) : clock;
  std::vector<std::int64_t> timed_ns;  // what the report would say: the runs' own times
  for (auto _ : state) {
    const auto observation = run_cell(cell, request, tracer, timer);
    for (const auto& run : observation.runs)
      if (!run.warmup) timed_ns.push_back(run.time_ns);
  }
  std::sort(timed_ns.begin(), timed_ns.end());
  if (!timed_ns.empty()) state.counters["median_run_ms"] = static_cast<double>(timed_ns[timed_ns.size() / 2]) / 1e6;
  state.counters["runs"] = benchmark::Counter(20.0 * state.iterations());
  state.counters["per_run"] =
      benchmark::Counter(20.0 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One ATen op per run.
BENCHMARK_CAPTURE(run_cells, sum_untraced, "sum", "f32", Mode::untraced)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, sum_timed, "sum", "f32", Mode::timed)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, sum_traced, "sum", "f32", Mode::traced)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, sum_library, "sum", "f32", Mode::library)->Unit(benchmark::kMillisecond);
// A forward and backward pass: tens of ATen ops per run.
BENCHMARK_CAPTURE(run_cells, pooling_untraced, "pooling", "max2d-f32", Mode::untraced)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, pooling_timed, "pooling", "max2d-f32", Mode::timed)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, pooling_traced, "pooling", "max2d-f32", Mode::traced)->Unit(benchmark::kMillisecond);
// One MKL SGEMM per run; conv2d forward and backward: 15 oneDNN primitives per run.
BENCHMARK_CAPTURE(run_cells, matmul_traced, "matmul", "f32", Mode::traced)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, matmul_library, "matmul", "f32", Mode::library)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, conv_traced, "conv", "f32", Mode::traced)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_cells, conv_library, "conv", "f32", Mode::library)->Unit(benchmark::kMillisecond);

// The worker's own cost per run, as the worker runs (traced, timed, digested): the time a cell spends
// outside its runs' timed spans, for a cell of 1 + 2N runs less one of 1 + N with the variant's inputs
// drawn once (InputCache), so preparing cancels out; over N, per run. Process 1: no timing-only runs.
// `overhead_pct` is that over the op's median (goal: under 1% for ops over 1 ms).
void per_run_overhead(benchmark::State& state, const char* probe, const char* variant, bool traced) {
  apply_process_settings({{"threads", "1"}});
  const auto cell = make_cell(probe, variant);
  std::unique_ptr<Tracer> tracer =
      traced ? make_library_verbose_tracer(make_record_function_tracer()) : std::make_unique<NullTracer>("off");
  SteadyClockTimer timer;
  InputCache inputs;
  constexpr int kRuns = 20;
  auto timed_cell = [&](int repeats, std::vector<std::int64_t>& run_ns) {
    WorkerRequest request;
    request.warmup = 1;
    request.repeats = repeats;
    request.process = 1;
    const auto started = std::chrono::steady_clock::now();
    const auto observation = run_cell(cell, request, *tracer, timer, &inputs);
    auto outside = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started).count();
    for (const auto& run : observation.runs) {
      outside -= static_cast<double>(run.time_ns);
      if (!run.warmup) run_ns.push_back(run.time_ns);
    }
    return outside;
  };
  std::vector<std::int64_t> run_ns;
  timed_cell(kRuns, run_ns);  // draws the inputs
  run_ns.clear();
  double extra_ns = 0;
  for (auto _ : state) extra_ns += timed_cell(2 * kRuns, run_ns) - timed_cell(kRuns, run_ns);
  std::sort(run_ns.begin(), run_ns.end());
  const double median = run_ns.empty() ? 0 : static_cast<double>(run_ns[run_ns.size() / 2]);
  const double overhead = extra_ns / static_cast<double>(kRuns * state.iterations());
  // Of that overhead, the digest of the outputs (XXH3-128 over every output byte): one pass over the
  // outputs the op wrote, which no determinism check can skip.
  const auto* definition = find_registered_probe(probe);
  ProbeContext context(at::kCPU, 0, *definition->info.find_variant(variant), &inputs);
  const auto outputs = definition->prepare(context)();
  std::vector<double> digest_ns;
  for (int i = 0; i < 11; ++i) {
    const auto started = std::chrono::steady_clock::now();
    ImmediateCopier copier;
    NamedTensors named(outputs.begin(), outputs.end());
    std::vector<std::string> names;
    for (const auto& [name, _] : named) names.push_back(name);
    benchmark::DoNotOptimize(digest_canonical_outputs(names, copier.copy(named)->wait()));
    digest_ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started).count());
  }
  std::sort(digest_ns.begin(), digest_ns.end());
  const double digest = digest_ns[digest_ns.size() / 2];
  state.counters["op_median_ms"] = median / 1e6;
  state.counters["overhead_ms"] = overhead / 1e6;
  state.counters["overhead_pct"] = median > 0 ? overhead / median * 100 : 0;
  state.counters["digest_pct"] = median > 0 ? digest / median * 100 : 0;
}
BENCHMARK_CAPTURE(per_run_overhead, matmul_f32, "matmul", "f32", true)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(per_run_overhead, conv_f32, "conv", "f32", true)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(per_run_overhead, index_add_f32, "index_add", "f32", true)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);
BENCHMARK_CAPTURE(per_run_overhead, matmul_f32_untraced, "matmul", "f32", false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);
BENCHMARK_CAPTURE(per_run_overhead, conv_f32_untraced, "conv", "f32", false)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

// The RecordFunction callback alone: one tiny op per iteration, with and without the tracer.
void tiny_op(benchmark::State& state) {
  std::unique_ptr<Tracer> tracer = state.range(0) ? make_record_function_tracer() : nullptr;
  const auto a = at::ones({4});
  if (tracer) tracer->begin_run();
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.add(a));
    if (tracer && state.iterations() % 512 == 0) {  // keep the record list bounded, as end_run does per run
      tracer->end_run();
      tracer->begin_run();
    }
  }
  if (tracer) tracer->end_run();
}
BENCHMARK(tiny_op)->Arg(0)->Arg(1)->ArgName("traced");

// The verbose capture alone: one small MKL SGEMM per iteration, RecordFunction only or with the capture.
void tiny_matmul(benchmark::State& state) {
  auto tracer =
      state.range(0) ? make_library_verbose_tracer(make_record_function_tracer()) : make_record_function_tracer();
  const auto a = at::ones({16, 16});
  tracer->begin_run();
  for (auto _ : state) {
    benchmark::DoNotOptimize(at::mm(a, a));
    if (state.iterations() % 512 == 0) {
      tracer->end_run();
      tracer->begin_run();
    }
  }
  tracer->end_run();
}
BENCHMARK(tiny_matmul)->Arg(0)->Arg(1)->ArgName("library");

// Digest throughput on one 64 MiB buffer: raw XXH3-128, the canonical form (dtype, rank and sizes
// first), and a float32 tensor as the worker digests it (canonical_tensor, then the canonical form).
constexpr std::int64_t kDigestElements = std::int64_t{16} << 20;  // float32: 64 MiB

void digest_raw_xxh3(benchmark::State& state) {
  const auto tensor = at::rand({kDigestElements});
  for (auto _ : state) benchmark::DoNotOptimize(XXH3_128bits(tensor.data_ptr(), tensor.nbytes()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(tensor.nbytes()));
}
BENCHMARK(digest_raw_xxh3)->Unit(benchmark::kMillisecond);

void digest_canonical_form(benchmark::State& state) {
  const auto tensor = at::rand({kDigestElements});
  for (auto _ : state)
    benchmark::DoNotOptimize(digest_canonical("float", {kDigestElements}, tensor.data_ptr(), tensor.nbytes()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(tensor.nbytes()));
}
BENCHMARK(digest_canonical_form)->Unit(benchmark::kMillisecond);

void digest_tensor(benchmark::State& state) {
  const auto tensor = at::rand({kDigestElements});
  for (auto _ : state) {
    const auto canonical = canonical_tensor(tensor);
    benchmark::DoNotOptimize(digest_canonical(c10::toString(canonical.scalar_type()), canonical.sizes().vec(),
                                              canonical.data_ptr(), canonical.nbytes()));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(tensor.nbytes()));
}
BENCHMARK(digest_tensor)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace repro_audit

BENCHMARK_MAIN();
