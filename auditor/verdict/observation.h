#pragma once
// What a worker saw of one cell in one process: plain values, streamed back as JSON.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/records.h"

namespace repro_audit {

// How a cell's runs in one process ended. The names exist only at the JSON edge (report/json_io.cc).
enum class ObservationStatus {
  ok,           // every run finished and was digested
  exception,    // the probe or the op threw
  unsupported,  // the probe has no implementation for the device or dtype
  crashed,      // the worker died (a signal, an exit mid-cell)
  timeout,      // the worker exceeded the cell's time limit and was ended
};

inline constexpr std::array<std::pair<ObservationStatus, std::string_view>, 5> kObservationStatusNames = {{
    {ObservationStatus::ok, "ok"},
    {ObservationStatus::exception, "exception"},
    {ObservationStatus::unsupported, "unsupported"},
    {ObservationStatus::crashed, "crashed"},
    {ObservationStatus::timeout, "timeout"},
}};

inline std::string to_string(ObservationStatus status) {
  for (const auto& [value, name] : kObservationStatusNames)
    if (value == status) return std::string(name);
  return "?";
}

inline std::optional<ObservationStatus> observation_status_from_string(std::string_view text) {
  for (const auto& [value, name] : kObservationStatusNames)
    if (text == name) return value;
  return std::nullopt;
}

// "ok, exception, unsupported, crashed, timeout": for the error that rejects any other name.
inline std::string observation_status_names() {
  std::string names;
  for (const auto& [value, name] : kObservationStatusNames) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

struct RunObservation {
  std::string digest;                                        // combined over every output
  std::vector<std::pair<std::string, std::string>> outputs;  // name -> digest, in the probe's order
  bool warmup = false;                                       // digested, not timed
  std::int64_t time_ns = 0;
  std::string kernel_digest;  // digest of the kernel sequence; empty when not traced
  std::string op_digest;      // model cells: digest of the run's per-op records; empty when not recorded
  bool per_op = false;        // its ops were digested as it ran (slower): timed apart from the other runs
};

// One dispatcher op of a model run, digested as it began (inputs) and as it ended (outputs).
// Records are kept in the order ops end, so an op nested in another comes before it.
struct OpRecord {
  std::string name;                  // "aten::addmm", or an autograd node ("AddmmBackward0")
  std::string module;                // TorchScript module path ("block.fc1"); "" at the top level
  int depth = 0;                     // how many recorded ops enclose it
  std::int64_t start = 0;            // its place in the order ops began
  std::string inputs;                // digest of the tensor and scalar arguments it read (out= arguments left out)
  std::string outputs;               // digest of its outputs; "" when they hold uninitialised memory (aten::empty)
  std::vector<std::string> kernels;  // kernel trace records launched while it was the innermost op
};

// A distinct per-op sequence of one process, by its digest.
struct OpSequence {
  std::string digest;
  std::vector<OpRecord> ops;
  bool truncated = false;  // longer than kMaxOpsPerRun: the tail was not kept
};

// py cells: a random generator the step or its factory drew from (python_runner/python_randomness.py).
struct RandomSource {
  std::string name;   // "random", "numpy.random", "torch (cpu)", "helpers._SHUFFLE", "step.<closure rng>"
  std::string kind;   // random.Random, numpy.random.RandomState, numpy.random.Generator, torch.Generator
  std::string where;  // global, module attribute, closure, object path
  std::string state;  // digest of its state after the factory ran: equal in every process when seeded alike
  bool drawn_in_factory = false;
  bool drawn_in_runs = false;
  bool seeded_by_runner = false;  // torch's own generators: seeded with the cell's seed before every run
  std::string recipe;             // what seeds it alike in every process
};

// py cells: one random source over every process (kinds/python_randomness.h).
struct RandomSourceVerdict {
  std::string name;
  std::string kind;
  std::string where;
  std::string recipe;
  bool drawn_in_factory = false;
  bool drawn_in_runs = false;
  // "alike": one state after the factory in every process; "differs": not seeded alike; "runner": torch's
  // own generators, seeded with the cell's seed before every run; "unknown": seen in one process only.
  std::string seeded;
};

// How a training run's divergence grew: after SGD step `step`, the largest difference of the loss
// and of the parameters between runs of one process (-1: not measured, the runs were in different
// processes only).
struct StepGrowth {
  int step = 0;
  double loss_difference = 0;
  double parameter_difference = 0;
};

// py cells that make a DataLoader: one batch of the first digested run, and a worker's random sources.
struct LoaderBatch {
  int epoch = 0;
  int batch = 0;
  std::vector<std::int64_t> indices;  // its samples' indices as the batch sampler gave them (at most 256)
  int worker = -1;                    // the worker process that made it; -1: the loading process
  std::vector<std::string> samples;   // a short digest of each sample (at most 64)
};
struct LoaderWorker {
  int worker = 0;
  std::vector<std::pair<std::string, std::string>> start;  // source name -> its state's digest as the worker began
  std::vector<std::string> drawn;                          // the sources it drew from while making batches
};
struct LoaderObservation {
  std::vector<LoaderBatch> batches;
  int epochs = 0;
  int batches_per_epoch = 0;
  int num_workers = 0;
  std::vector<LoaderWorker> workers;
};
inline constexpr std::size_t kMaxLoaderBatchesKept = 100000;

// At most this many random sources are kept per process (the runner reports no more).
inline constexpr std::size_t kMaxRandomSources = 64;

struct ProcessObservation {
  int process = 0;
  std::string host;  // the machine that ran it, when a merge put several machines' processes in one cell
  ObservationStatus status = ObservationStatus::ok;
  std::string message;  // exception text, unsupported reason, signal name
  std::vector<RunObservation> runs;
  std::vector<std::string> warnings;
  std::optional<Divergence> divergence;
  // Distinct kernel sequences of this process, keyed by their digest.
  std::vector<std::pair<std::string, std::vector<KernelRecord>>> kernel_sequences;
  std::string trace_unavailable;  // why no kernels were traced, when none were
  std::string input_digest;       // the inputs the probe's context made; "" when unknown (older files)
  // Invariance probes: each output of the first run that differs from the reference, measured
  // against it (Divergence::output names the perturbation).
  std::vector<Divergence> variations;
  // Probes that accumulate (config/catalogue.h, AccumulationOrder): their sensitivity to the order,
  // measured by the first process.
  std::optional<Sensitivity> sensitivity;
  // Model cells. Distinct per-op sequences (run 0's first; at most a few are kept), why none were
  // recorded when none were, every output that differed from run 0 in this process with its
  // largest difference, and the origin op's output measured against run 0 (Divergence::output is
  // "#<position> <op name>").
  std::vector<OpSequence> op_sequences;
  std::string per_op_unavailable;
  std::vector<Divergence> output_differences;
  std::optional<Divergence> origin_difference;
  // Timing-only runs after the determinism runs (not digested, not traced), until the timing rule was
  // met, then those of the later timing rounds (timing/timing.h), appended in order. They are the
  // cell's timing; the determinism runs' times only where there are none (an audit without costs).
  std::vector<std::int64_t> timing_ns;
  // On a GPU: the SM clock (MHz) after each of them, parallel to `timing_ns` (0: not read); empty
  // where no clock was read (the CPU, older files).
  std::vector<int> timing_clock_mhz;
  int timing_rounds = 1;        // how many timing rounds `timing_ns` holds; older files: 1
  bool stopped_early = false;   // the runs stopped at the first digest that differed: the verdict was certain
  bool budget_limited = false;  // the runs stopped when the cell's share of --budget was spent
  // The worker ran beside other workers (--jobs): its digests count, its run times are not timings.
  bool untimed = false;
  // py cells: the random sources drawn from, PYTHONHASHSEED as the process had it ("" unset), and a
  // digest of the hashes of fixed strings (equal in two processes that hash strings alike).
  std::vector<RandomSource> random_sources;
  std::string hash_seed;
  std::string hash_probe;
  std::optional<LoaderObservation> loader;
};

// At most this many per-op records are kept per run, and this many distinct sequences per process.
inline constexpr std::size_t kMaxOpsPerRun = 20000;
inline constexpr std::size_t kMaxOpSequences = 4;

}  // namespace repro_audit
