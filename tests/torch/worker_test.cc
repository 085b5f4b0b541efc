#include "worker/worker.h"

#include <gtest/gtest.h>

#include "test_tools.h"

#include "apply/settings_apply.h"
#include "common/user_error.h"
#include "config/settings.h"
#include "kind/cell_kind.h"
#include "probe/probe.h"
#include "python_runner/python_worker.h"
#include "runners/cell_runner.h"
#include "timing/timing.h"
#include "verdict/verdict.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace repro_audit {
namespace {

using testing::make_cell;

Verdict judge_in_process(const Cell& cell, int repeats) {
  WorkerRequest request;
  request.repeats = repeats;
  request.warmup = 1;
  apply_process_settings(process_settings(cell.settings));
  return judge(cell, {testing::run_untraced(cell, request)});
}

// A cell whose share of --budget is spent at once still runs kMinimumRepeats after its warm-up, says
// that the budget limited it, and takes no timing-only runs.
TEST(Budget, ASpentShareStopsTheRunsAfterTheMinimum) {
  WorkerRequest request;
  request.repeats = 20;
  request.warmup = 1;
  auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  cell.budget_seconds = 1e-6;
  apply_process_settings(process_settings(cell.settings));
  const auto observation = testing::run_untraced(cell, request);
  EXPECT_EQ(observation.runs.size(), static_cast<std::size_t>(1 + kMinimumRepeats));
  EXPECT_TRUE(observation.budget_limited);
  EXPECT_TRUE(observation.timing_ns.empty());
  EXPECT_TRUE(judge(cell, {observation}).budget_limited);
  cell.budget_seconds = 0;  // no budget: every repeat, then timing-only runs up to the minimum samples
  const auto unlimited = testing::run_untraced(cell, request);
  EXPECT_EQ(unlimited.runs.size(), 21u);
  EXPECT_FALSE(unlimited.budget_limited);
}

// A later timing round: the same inputs, a warm-up, then timing-only runs for the round's share of the
// budget; no determinism runs, nothing digested.
TEST(TimingRound, ALaterRoundOnlyTimesTheCellOnItsOwnInputs) {
  WorkerRequest request;
  request.repeats = 4;
  request.warmup = 1;
  request.timing.rounds = 3;
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  apply_process_settings(process_settings(cell.settings));
  const auto determinism = testing::run_untraced(cell, request);
  ASSERT_EQ(to_string(determinism.status), std::string("ok")) << determinism.message;
  EXPECT_EQ(determinism.timing_rounds, 1);
  request.timing_round = 2;
  const auto round = testing::run_untraced(cell, request);
  ASSERT_EQ(to_string(round.status), std::string("ok")) << round.message;
  EXPECT_TRUE(round.runs.empty());
  EXPECT_EQ(round.timing_rounds, 2);
  EXPECT_GE(round.timing_ns.size(), static_cast<std::size_t>(request.timing.round_min_samples));
  for (const auto sample : round.timing_ns) EXPECT_GT(sample, 0);
  EXPECT_EQ(round.input_digest, determinism.input_digest);
  // A cell that raises in its round says so as its status, like any run.
  request.timing_round = 3;
  const auto broken = testing::run_untraced(make_cell("control.throw", "default", {{"threads", "1"}}), request);
  EXPECT_EQ(to_string(broken.status), std::string("exception"));
}

TEST(Inputs, TheContextDigestsTheInputsItMakesTheSameWayEveryTime) {
  WorkerRequest request;
  request.repeats = 1;
  request.warmup = 0;
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  apply_process_settings(process_settings(cell.settings));
  const auto first = testing::run_untraced(cell, request);
  const auto again = testing::run_untraced(cell, request);
  EXPECT_EQ(first.input_digest.size(), 32u);
  EXPECT_EQ(first.input_digest, again.input_digest);
  const auto other_seed = testing::run_untraced(make_cell("sum", "f32", {{"threads", "1"}, {"seed", "7"}}), request);
  EXPECT_NE(other_seed.input_digest, first.input_digest);
}

// With 2 threads the CPU kernel adds with atomics; 30 runs that all agree would be a near-impossible
// coincidence here (each run differs with probability near 1 on this machine). The runs stop at the
// first digest that differs: two digests make the verdict certain.
TEST(IndexPutAccumulate, DivergesByDefaultWithTwoThreads) {
  // The race needs both threads at once: with another test busy on the second core it can take many
  // runs to show, and the runs stop at the first divergence.
  const auto verdict = judge_in_process(make_cell("index_put_accumulate", "f32", {{"threads", "2"}}), 200);
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.distinct_digests, 2);
  EXPECT_TRUE(verdict.stopped_early);
  EXPECT_LT(verdict.runs, 201);
  // The timing is the timing-only runs after the stop (untraced, undigested): at least the minimum,
  // within the determinism runs' time.
  EXPECT_GT(verdict.timing.samples, 0);
  ASSERT_TRUE(verdict.divergence);
  EXPECT_EQ(verdict.divergence->output, "output");
  EXPECT_GT(verdict.divergence->differing_elements, 0);
  EXPECT_GT(verdict.divergence->max_ulp_difference, 0);
}

TEST(IndexPutAccumulate, DeterministicUnderStrict) {
  const auto verdict = judge_in_process(
      make_cell("index_put_accumulate", "f32", {{"threads", "2"}, {"deterministic_algorithms", "on"}}), 30);
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_EQ(verdict.runs, 31);
  EXPECT_LT(verdict.divergence_rate_bound, 0.11);
}

TEST(Worker, EmitsEnvironmentStartCellAndDone) {
  WorkerRequest request;
  request.repeats = 2;
  request.process_settings = {{"threads", "1"}};
  request.cells = {make_cell("sum", "f32", {{"threads", "1"}})};
  std::vector<std::string> events;
  nlohmann::json cell_event;
  NullTracer tracer("not traced");
  SteadyClockTimer timer;
  run_worker(request, tracer, timer, [&](const nlohmann::json& event) {
    events.push_back(event.at("event"));
    if (event.at("event") == "cell") cell_event = event;
  });
  EXPECT_EQ(events, (std::vector<std::string>{"environment", "start", "cell", "done"}));
  EXPECT_EQ(cell_event.at("observation").at("runs").size(), 3u);
  EXPECT_EQ(cell_event.at("observation").at("status"), "ok");
}

TEST(Worker, AProbeThatThrowsBecomesAnExceptionObservation) {
  auto cell = make_cell("sum", "f32", {});
  cell.probe = "no_such_probe";
  const auto observation = testing::run_untraced(cell, WorkerRequest{});
  EXPECT_EQ(observation.status, ObservationStatus::exception);
  EXPECT_NE(observation.message.find("no_such_probe"), std::string::npos);
}

}  // namespace
}  // namespace repro_audit

namespace repro_audit {
namespace {

// A test-only probe whose output alternates between two known tensors: a crafted divergence.
const bool alternating_registered =
    register_probe(ProbeBuilder("test.alternating")
                       .variant(Variant(DType::f32))
                       .on_request_only()
                       .no_python("a test probe")
                       .prepare([](ProbeContext&) -> RunFunction {
                         auto calls = std::make_shared<int>(0);
                         return [calls] {
                           const bool odd = (*calls)++ % 2 == 1;
                           // Run 1 differs in three elements: 2.0 -> 2.0 + 1 ULP, 3.0 -> 3.5, -0.0 -> 0.0.
                           const auto values = odd ? std::vector<float>{1.0f, std::nextafter(2.0f, 3.0f), 3.5f, 0.0f}
                                                   : std::vector<float>{1.0f, 2.0f, 3.0f, -0.0f};
                           return Outputs{{"stable", at::ones({3})}, {"changing", at::tensor(values)}};
                         };
                       }));

TEST(VerdictDetail, ACraftedDivergenceIsMeasuredElementWise) {
  const auto cell = make_cell("test.alternating", "f32", {});
  WorkerRequest request;
  request.repeats = 3;
  const auto verdict = judge(cell, {testing::run_untraced(cell, request)});
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.distinct_digests, 2);
  EXPECT_EQ(verdict.divergence_scope, "within-process");
  ASSERT_TRUE(verdict.divergence);
  EXPECT_EQ(verdict.divergence->output, "changing");  // the first output that diverged
  EXPECT_EQ(verdict.divergence->run, 1);
  EXPECT_EQ(verdict.divergence->differing_elements, 3);
  EXPECT_EQ(verdict.divergence->elements, 4);
  EXPECT_DOUBLE_EQ(verdict.divergence->max_abs_difference, 0.5);
  EXPECT_DOUBLE_EQ(verdict.divergence->max_ulp_difference, 1 << 21);  // 0.5 at 3.0, where 1 ULP is 2^-22
}

// max_unpool2d has no deterministic implementation on any device: it raises under
// deterministic algorithms and warns in warn-only mode.
const bool unpool_registered = register_probe(
    ProbeBuilder("test.unpool")
        .variant(Variant(DType::f32))
        .on_request_only()
        .no_python("a test probe")
        .prepare([](ProbeContext& context) -> RunFunction {
          const auto [pooled, indices] = at::max_pool2d_with_indices(context.randn({1, 2, 8, 8}), {2, 2});
          return [pooled, indices] { return Outputs{{"output", at::max_unpool2d(pooled, indices, {8, 8})}}; };
        }));

TEST(VerdictDetail, RaisesUnderStrictAndWarnsInWarnOnlyModeWithTheText) {
  WorkerRequest request;
  request.repeats = 2;
  const auto strict = make_cell("test.unpool", "f32", {{"deterministic_algorithms", "on"}});
  const auto raised = judge(strict, {testing::run_untraced(strict, request)});
  EXPECT_EQ(raised.kind, VerdictKind::raises);
  EXPECT_NE(raised.message.find("does not have a deterministic implementation"), std::string::npos) << raised.message;

  const auto warn = make_cell("test.unpool", "f32", {{"deterministic_algorithms", "warn"}});
  const auto warned = judge(warn, {testing::run_untraced(warn, request)});
  EXPECT_EQ(warned.kind, VerdictKind::warns);
  ASSERT_FALSE(warned.warnings.empty());
  EXPECT_NE(warned.warnings[0].find("max_unpooling2d"), std::string::npos) << warned.warnings[0];

  const auto off = make_cell("test.unpool", "f32", {});
  EXPECT_EQ(judge(off, {testing::run_untraced(off, request)}).kind, VerdictKind::deterministic);
}

// A test-only probe whose op warns once per process in libtorch (TORCH_WARN_ONCE: stft's deprecated real
// output), as sdpa's backward does under warn-only on CUDA.
const bool warns_once_registered =
    register_probe(ProbeBuilder("test.warns_once")
                       .variant(Variant(DType::f32))
                       .on_request_only()
                       .no_python("a test probe")
                       .prepare([](ProbeContext& context) -> RunFunction {
                         const auto signal = context.randn({256});
                         return [signal] {
                           return Outputs{{"output", at::stft(signal, 32, std::nullopt, std::nullopt, std::nullopt,
                                                              false, std::nullopt, false)}};
                         };
                       }));

// Each cell hears a once-per-process warning, whichever cells ran before it in the worker: the same
// cell run twice in this process keeps it both times.
TEST(VerdictDetail, EveryCellKeepsAWarningLibtorchGivesOncePerProcess) {
  WorkerRequest request;
  request.repeats = 2;
  const auto cell = make_cell("test.warns_once", "f32", {});
  for (int time = 0; time < 2; ++time) {
    const auto observation = testing::run_untraced(cell, request);
    ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
    const auto said = std::any_of(observation.warnings.begin(), observation.warnings.end(), [](const auto& text) {
      return text.find("return_complex=False") != std::string::npos;
    });
    EXPECT_TRUE(said) << "cell " << time << " of this process heard no warning";
  }
}

// Every kind in the table has its runner, and a cell that fails to prepare keeps nothing of its runs.
TEST(CellRunners, EveryKindHasARunner) {
  auto repeat = make_cell("sum", "f32", {});
  auto invariance = make_cell("batch_rows", "f32", {});
  invariance.invariance = Invariance::batch;
  auto model = make_cell("sum", "f32", {});
  model.model = ModelSpec{};
  const auto collective = make_cell("all_reduce", "f32", {{"ranks", "3"}});
  auto python = make_cell("sum", "f32", {});
  python.model = ModelSpec{};
  python.model->callable = "train_step:make";
  std::set<std::string> covered;
  for (const auto& cell : {repeat, invariance, model, collective, python}) {
    EXPECT_NE(make_cell_runner(cell), nullptr);
    covered.insert(kind_of(cell).name());
  }
  EXPECT_EQ(covered.size(), cell_kinds().size());
}

TEST(CellRunners, AnErrorLeavesAFreshObservationWithOnlyWhyItEnded) {
  WorkerRequest request;
  request.repeats = 3;
  auto cell = make_cell("sum", "f32", {});
  cell.variant = "no-such-variant";
  const auto observation = testing::run_untraced(cell, request);
  EXPECT_EQ(observation.status, ObservationStatus::exception);
  EXPECT_NE(observation.message.find("no-such-variant"), std::string::npos);
  EXPECT_TRUE(observation.runs.empty());
  EXPECT_TRUE(observation.input_digest.empty());
}

// A py cells' worker is their interpreter running the runner from -c; only an absolute path is started
// (the command resolves the one it is given: a relative one, e.g. from a journal edited by hand, would be
// looked up in the folder the audit runs in).
TEST(PyWorker, TheInterpreterRunsTheRunnerAndOnlyFromAnAbsolutePath) {
  const auto command = python_runner_command("/opt/venv/bin/python3");
  ASSERT_EQ(command.size(), 5u);
  EXPECT_EQ(command[0], "/opt/venv/bin/python3");
  EXPECT_EQ(command[1], "-u");
  EXPECT_EQ(command[2], "-c");
  EXPECT_NE(command[3].find("repro-audit's runner for `py` cells"), std::string::npos);
  for (const std::string relative : {"python3", "./python3", ""}) try {
      python_runner_command(relative);
      ADD_FAILURE() << "started " << relative;
    } catch (const EnvironmentError& error) {
      EXPECT_NE(std::string(error.what()).find("is not an absolute path"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace repro_audit
