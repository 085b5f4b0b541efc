// How timing-only runs use the stream hold, proven on the CPU with a timer that plays a GPU's hold: a
// later timing round warms up without holding, a run whose hold gave up is no sample, and how the
// cell was timed reaches its observation.
#include <gtest/gtest.h>

#include <algorithm>

#include "apply/settings_apply.h"
#include "test_tools.h"
#include "worker/worker.h"

namespace repro_audit {
namespace {

using testing::make_cell;

// Gives up the holds of the timed runs whose numbers are in `give_up` (0 is the first timed run).
class PlayedHold : public RunTimer {
 public:
  explicit PlayedHold(std::vector<int> give_up, std::string note = "")
      : give_up_(std::move(give_up)), note_(std::move(note)) {}
  void start() override { gave_up_ = false; }
  void start_timed() override {
    gave_up_ = std::find(give_up_.begin(), give_up_.end(), timed_runs) != give_up_.end();
    ++timed_runs;
  }
  std::int64_t stop_ns() override { return gave_up_ ? 50'000'000 : 1000; }
  bool last_hold_gave_up() const override { return gave_up_; }
  std::string timed_region_note() const override { return note_; }
  int timed_runs = 0;

 private:
  std::vector<int> give_up_;
  std::string note_;
  bool gave_up_ = false;
};

ProcessObservation later_round(PlayedHold& timer, int warmup) {
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  WorkerRequest request;
  request.warmup = warmup;
  request.timing_round = 2;
  request.timing.round_min_samples = 5;
  request.timing.budget_seconds = 0;
  apply_process_settings(process_settings(cell.settings));
  NullTracer tracer("not traced in this test");
  return run_cell(cell, request, tracer, timer, nullptr, nullptr);
}

// A fresh process's first runs wait for the GPU (kernels loaded on first launch, library handles):
// behind a hold they gave it up, and every later sample of the cell was launch-bound.
TEST(HeldTiming, ALaterRoundWarmsUpWithoutHolding) {
  PlayedHold timer({});
  const auto observation = later_round(timer, 2);
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  EXPECT_EQ(observation.timing_ns.size(), 5u);
  EXPECT_EQ(timer.timed_runs, 5) << "a warm-up run was held";
}

TEST(HeldTiming, ARunWhoseHoldGaveUpIsNoSample) {
  PlayedHold timer({0, 3});
  const auto observation = later_round(timer, 1);
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  EXPECT_EQ(timer.timed_runs, 7);
  ASSERT_EQ(observation.timing_ns.size(), 5u);
  for (const auto sample : observation.timing_ns) EXPECT_EQ(sample, 1000) << "a give-up's wait was kept as a sample";
}

TEST(HeldTiming, HowTheCellWasTimedReachesItsObservation) {
  PlayedHold timer({}, "timed without holding the stream: played");
  const auto observation = later_round(timer, 1);
  EXPECT_NE(
      std::find(observation.warnings.begin(), observation.warnings.end(), "timed without holding the stream: played"),
      observation.warnings.end());
}

}  // namespace
}  // namespace repro_audit
