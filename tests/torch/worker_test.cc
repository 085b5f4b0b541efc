#include "worker/worker.h"

#include <gtest/gtest.h>

#include "config/settings.h"
#include "verdict/verdict.h"
#include "worker/settings_apply.h"

namespace repro_audit {
namespace {

Cell make_cell(const std::string& probe, const std::string& variant, const FlagSet& overrides) {
  Cell cell;
  cell.probe = probe;
  cell.variant = variant;
  cell.device = "cpu";
  cell.settings = make_flag_set(overrides, "cpu");
  cell.key = cell_key(probe, variant, "cpu", cell.settings);
  return cell;
}

Verdict judge_in_process(const Cell& cell, int repeats) {
  WorkerRequest request;
  request.repeats = repeats;
  request.warmup = 1;
  apply_process_settings(process_settings(cell.settings));
  return judge(cell, {run_cell(cell, request)});
}

// With 2 threads the CPU kernel adds with atomics; 30 runs that all agree would be a near-impossible
// coincidence here (each run differs with probability near 1 on this machine).
TEST(IndexPutAccumulate, DivergesByDefaultWithTwoThreads) {
  const auto verdict = judge_in_process(make_cell("index_put_accumulate", "f32", {{"threads", "2"}}), 30);
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_GE(verdict.distinct_digests, 3);
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
  run_worker(request, [&](const nlohmann::json& event) {
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
  const auto observation = run_cell(cell, WorkerRequest{});
  EXPECT_EQ(observation.status, "exception");
  EXPECT_NE(observation.message.find("no_such_probe"), std::string::npos);
}

}  // namespace
}  // namespace repro_audit
