// The timing rounds: which cells a later round times, and what a round adds to the first observation.
#include <gtest/gtest.h>

#include "fake_workers.h"
#include "protocol/observation_json.h"
#include "protocol/worker_protocol.h"
#include "supervisor/supervisor.h"

namespace repro_audit {
namespace {

using testing::make_cell;

ProcessObservation timed_observation(int process, std::int64_t run_ns, int runs = 3) {
  ProcessObservation observation;
  observation.process = process;
  RunObservation warmup;
  warmup.warmup = true;
  warmup.time_ns = 100 * run_ns;
  observation.runs.push_back(warmup);
  for (int i = 0; i < runs; ++i) {
    RunObservation run;
    run.time_ns = run_ns;
    observation.runs.push_back(run);
  }
  return observation;
}

TEST(TimingRounds, TimeTheCellsWhoseFirstProcessRanTimedWithinTheLimitAndLackTheRound) {
  TimingRule rule;  // 0.03 s over 3 rounds: a run of at most 20 ms takes part
  ASSERT_DOUBLE_EQ(rule.round_limit_seconds(), 0.02);
  Batch one{{},
            {make_cell("fast"), make_cell("slow"), make_cell("crashed"), make_cell("model"), make_cell("done"),
             make_cell("unseen"), make_cell("second-only")}};
  one.cells[3].model = ModelSpec{};
  Batch two{{{"threads", "2"}}, {make_cell("near"), make_cell("also")}};
  Observations observations;
  observations["fast"] = {timed_observation(0, 1'000'000), timed_observation(1, 1'000'000)};
  observations["slow"] = {timed_observation(0, 25'000'000)};  // its warm-up does not count, its runs do
  observations["crashed"] = {timed_observation(0, 1'000)};
  observations["crashed"][0].status = ObservationStatus::crashed;
  observations["model"] = {timed_observation(0, 1'000)};
  observations["done"] = {timed_observation(0, 1'000)};
  observations["done"][0].timing_rounds = 2;
  observations["second-only"] = {timed_observation(1, 1'000)};
  observations["near"] = {timed_observation(0, 19'000'000)};
  observations["also"] = {timed_observation(0, 30'000'000, 3)};
  observations["also"][0].timing_ns = std::vector<std::int64_t>(9, 1'000'000);  // its median: 1 ms

  const auto round2 = timing_round_batches({one, two}, observations, rule, 2);
  ASSERT_EQ(round2.size(), 2u);
  // Backwards: the last batch first, its cells from the end.
  EXPECT_EQ(round2[0].process_settings, two.process_settings);
  ASSERT_EQ(round2[0].cells.size(), 2u);
  EXPECT_EQ(round2[0].cells[0].key, "also");
  EXPECT_EQ(round2[0].cells[1].key, "near");
  ASSERT_EQ(round2[1].cells.size(), 1u);
  EXPECT_EQ(round2[1].cells[0].key, "fast");

  const auto round3 = timing_round_batches({one, two}, observations, rule, 3);
  ASSERT_EQ(round3.size(), 2u);
  EXPECT_EQ(round3[0].cells.size(), 2u);  // "done" had round 2 only
  EXPECT_EQ(round3[0].cells[0].key, "fast");
  EXPECT_EQ(round3[0].cells[1].key, "done");
  EXPECT_EQ(round3[1].cells[0].key, "near");

  rule.budget_seconds = 0.3;  // a larger budget lets slower cells take part
  EXPECT_EQ(timing_round_batches({one}, observations, rule, 2).at(0).cells.size(), 2u);
}

// A cell's rounds are decided on its first round: one that took round 2 takes round 3, though its round-2
// samples (a loaded machine) put its median past the limit; the report then never holds 2 of 3 rounds.
TEST(TimingRounds, ACellThatTookRoundTwoTakesEveryRound) {
  TimingRule rule;  // limit 20 ms
  Batch batch{{}, {make_cell("fast"), make_cell("slow")}};
  Observations observations;
  observations["fast"] = {timed_observation(0, 15'000'000, 4)};
  observations["slow"] = {timed_observation(0, 25'000'000, 4)};
  ASSERT_EQ(timing_round_batches({batch}, observations, rule, 2).at(0).cells.size(), 1u);
  ProcessObservation round;
  round.timing_ns = std::vector<std::int64_t>(9, 40'000'000);  // round 2 ran at 40 ms a run
  add_timing_round(observations["fast"][0], round, 2);
  const auto round3 = timing_round_batches({batch}, observations, rule, 3);
  ASSERT_EQ(round3.size(), 1u);
  ASSERT_EQ(round3[0].cells.size(), 1u);
  EXPECT_EQ(round3[0].cells[0].key, "fast");
}

TEST(TimingRounds, ARoundAddsItsSamplesOrSaysWhyItHasNone) {
  auto first = timed_observation(0, 1'000);
  first.input_digest = "aa";
  first.timing_ns = {1, 2};
  ProcessObservation round;
  round.timing_ns = {3, 4};
  round.input_digest = "aa";
  add_timing_round(first, round, 2);
  EXPECT_EQ(first.timing_ns, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(first.timing_rounds, 2);
  EXPECT_TRUE(first.warnings.empty());
  EXPECT_EQ(first.runs.size(), 4u);  // the determinism runs are untouched

  round.input_digest = "bb";
  add_timing_round(first, round, 3);
  EXPECT_EQ(first.timing_ns.size(), 6u);
  ASSERT_EQ(first.warnings.size(), 1u);
  EXPECT_EQ(first.warnings[0], "timing round 3 drew other inputs (digest bb, not aa)");

  ProcessObservation timeout;
  timeout.status = ObservationStatus::timeout;
  timeout.message = "exceeded the time limit of 60 s";
  add_timing_round(first, timeout, 4);
  EXPECT_EQ(first.timing_ns.size(), 6u);
  EXPECT_EQ(first.timing_rounds, 4);
  EXPECT_EQ(first.warnings.back(), "timing round 4 ended: timeout: exceeded the time limit of 60 s");
  EXPECT_EQ(first.status, ObservationStatus::ok);
}

TEST(TimingRounds, RequestsAndObservationsCarryTheirRoundsAndOlderFilesHaveOne) {
  WorkerRequest request;
  request.timing.rounds = 4;
  request.timing_round = 3;
  request.timing.round_min_samples = 5;
  const auto back = request_from_json(request_to_json(request));
  EXPECT_EQ(back.timing.round_min_samples, 5);
  EXPECT_EQ(back.timing.rounds, 4);
  EXPECT_EQ(back.timing_round, 3);
  auto json = request_to_json(request);
  json["timing"].erase("rounds");
  json.erase("timing_round");
  EXPECT_EQ(request_from_json(json).timing.rounds, 1);  // a request of before: one round, as then
  EXPECT_EQ(request_from_json(json).timing_round, 0);

  auto observation = timed_observation(0, 1'000);
  observation.timing_rounds = 3;
  const nlohmann::json written = observation;
  EXPECT_EQ(written.at("timing_rounds"), 3);
  EXPECT_EQ(written.get<ProcessObservation>().timing_rounds, 3);
  observation.timing_rounds = 1;
  const nlohmann::json older = observation;
  EXPECT_FALSE(older.contains("timing_rounds"));  // files stay as they were with one round
  EXPECT_EQ(older.get<ProcessObservation>().timing_rounds, 1);
}

// A later round's worker asks a fork server for its process (kWorkerForkRound) only on the CPU, for probes'
// cells and py cells that do not compile: compiled ones, TorchScript and AOTInductor models and CUDA keep
// workers of their own.
TEST(TimingRounds, OnlyCellsOnTheCpuThatNeitherCompileNorLoadAModelMayRunInAForkedProcess) {
  ModelSpec model;
  model.name = "step";
  model.callable = "/steps/step.py:make";
  model.python = "/usr/bin/python3";
  auto py = make_cell("py.step/call@cpu|threads=1");
  py.model = model;
  auto compiled = make_cell("py.step/call@cpu|compile=default,threads=1");
  compiled.model = model;
  compiled.settings = {{"compile", "default"}, {"threads", "1"}};
  auto scripted = make_cell("model.linear/forward@cpu|threads=1");
  scripted.model = ModelSpec{};
  scripted.model->name = "linear";
  scripted.model->path = "/models/linear.pt";
  const Batch eager{{{"threads", "1"}}, {py}}, compiling{{{"threads", "1"}}, {compiled}},
      cpp{{{"threads", "1"}}, {make_cell("sum/f32@cpu|threads=1")}},
      with_model{{{"threads", "1"}}, {make_cell("sum/f32@cpu|threads=1"), scripted}};
  SupervisorOptions cpu, cuda;
  cpu.device = "cpu";
  cuda.device = "cuda:0";
  EXPECT_EQ(round_environment(eager, cpu).count(kWorkerForkRound), 1u);
  EXPECT_EQ(round_environment(eager, cuda).count(kWorkerForkRound), 0u);
  EXPECT_EQ(round_environment(compiling, cpu).count(kWorkerForkRound), 0u);
  EXPECT_EQ(round_environment(cpp, cpu).count(kWorkerForkRound), 1u);
  EXPECT_EQ(round_environment(cpp, cuda).count(kWorkerForkRound), 0u);
  EXPECT_EQ(round_environment(with_model, cpu).count(kWorkerForkRound), 0u);
  // Apart from the key, the batch's own environment: what its fork server is started with.
  auto own = round_environment(eager, cpu);
  own.erase(kWorkerForkRound);
  EXPECT_EQ(own, batch_environment(eager));
  // A py worker says what its cells imported, before done; anything else is no event.
  const auto imports = parse_event(R"({"event": "imports", "modules": ["torch._dynamo"]})");
  ASSERT_TRUE(imports);
  EXPECT_EQ(imports->kind, WorkerEvent::Kind::imports);
  EXPECT_EQ(imports->modules, std::vector<std::string>{"torch._dynamo"});
  EXPECT_FALSE(parse_event(R"({"event": "imports", "modules": "torch._dynamo"})"));
}

}  // namespace
}  // namespace repro_audit
