#pragma once
// The verdict of a cell: a pure function of its observations.
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "plan/plan.h"
#include "timing/timing.h"
#include "verdict/observation.h"
#include "verdict/origin.h"

namespace repro_audit {

// VerdictKind, its to_string and verdict_from_string: config/catalogue.h.

struct Verdict {
  VerdictKind kind = VerdictKind::error;
  int runs = 0;  // digested runs over every process
  int processes = 0;
  int distinct_digests = 0;
  std::string digest;  // the agreed digest when every run agreed
  bool digests_agree = false;
  std::string divergence_scope;  // within-process | across-processes
  std::optional<Divergence> divergence;
  double divergence_rate_bound = 1.0;  // 95% upper bound on the per-run divergence rate
  std::string message;
  std::vector<std::string> warnings;
  Timing timing;                // every timed run: the determinism runs after warm-up and the timing-only runs
  bool stopped_early = false;   // a process stopped its runs at the first divergence: the verdict was certain
  bool budget_limited = false;  // a process ran fewer repeats: the cell's share of --budget was spent
  bool kernels_varied = false;
  std::string kernel_digest;  // when every run launched the same sequence
  // varies: each perturbation whose result differs from the reference, measured where a worker did.
  std::vector<Divergence> variations;
  // Probes that accumulate: how sensitive their inputs make the result to the order (common/records.h).
  std::optional<Sensitivity> sensitivity;
  // Model cells: the outputs (gradients by parameter name) whose digests differ between runs, where
  // the divergence starts, why no origin is named when none is, and the growth over SGD steps.
  std::vector<std::string> diverged_outputs;
  std::optional<Origin> origin;
  std::string origin_note;
  std::vector<StepGrowth> steps;
  Timing per_op_timing;        // model cells: the runs that digested every op (`timing` is of the others)
  Timing per_op_plain_timing;  // the plain runs among or after those, in the same processes
  // py cells: the random sources drawn from, and a divergence's cause, said before any origin.
  std::vector<RandomSourceVerdict> random_sources;
  std::string cause;
  std::vector<std::string> findings;  // what the runs showed beside the bits (workers sharing a stream)
};

// 1 - 0.05^(1/(n-1)): with n identical runs, the per-run divergence rate is below this with 95%.
double divergence_rate_bound(int runs);

// A cell of an op documented as possibly diverging under its settings (an atomic kernel by default;
// not the racy controls, whose power --detect measures) whose runs agree keeps running until the 95% bound on its
// divergence rate is below this level: kQuietRuns runs in all (1 - 0.05^(1/59) = 4.95%). Fewer, and the report says the
// rate is not bounded that low: a race that shows once in 30 runs would likely be missed.
inline constexpr double kQuietRateLevel = 0.05;
inline constexpr int kQuietRuns = 60;
bool may_diverge(Documented documented, const FlagSet& settings);
// "" when the verdict says nothing about a race, else what its agreeing runs do and do not show.
std::string quiet_runs_text(Documented documented, const FlagSet& settings, const Verdict& verdict);

Verdict judge(const Cell& cell, const std::vector<ProcessObservation>& observations);

// The first process that ran anything (a journal may hold a process with no runs beside others that
// ran): what a cell's outputs are compared with. Null when no process ran.
const ProcessObservation* first_with_runs(const std::vector<ProcessObservation>& observations);

// "48.2% of 'output' (482 of 1000 elements) change bits under 3 other accumulation orders (floor 10%)".
std::string sensitivity_text(const Sensitivity& sensitivity);
// A deterministic verdict of inputs that could not show a reordering says nothing: true then.
bool is_vacuous(const Verdict& verdict);

// Pass per the verdict table: deterministic, raises and agreeing warns pass; unsupported is skipped.
bool is_failing(const Verdict& verdict);
// Every run gave the same bits: deterministic, or an invariance probe's invariant or varies.
bool runs_agreed(VerdictKind kind);
// The runs gave different bits: nondeterministic, or warn-only mode's runs whose digests differ.
bool runs_diverged(const Verdict& verdict);
bool is_skipped(const Verdict& verdict);

// Where the observation contradicts what the probe documents for these settings.
struct Contradiction {
  std::string expected;
  std::string text;
  bool breaks_audit = false;  // a broken promise (silent divergence, error) rather than stale docs
};
std::optional<Contradiction> find_contradiction(Documented documented, const FlagSet& settings, const Verdict& verdict);
// The `expected` of a cell that ended without a verdict (error, crash, time limit): it fails the audit,
// but says nothing of PyTorch's documentation.
inline constexpr const char* kExpectedVerdict = "a verdict";

}  // namespace repro_audit
