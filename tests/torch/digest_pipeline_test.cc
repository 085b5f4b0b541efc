// The order of a GPU's overlapped digests, proven on the CPU with a fake stream: run i's digest is
// taken after run i+1 is launched and before the worker waits for run i+1, and the verdicts are the
// ones digesting each run at once gives.
#include "recording/digest_pipeline.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "apply/settings_apply.h"
#include "test_tools.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

using testing::make_cell;

// A stream that only logs: copies complete when waited for, like a GPU that has not got to them.
struct Log {
  std::vector<std::string> events;
  int runs = 0;
  int copies = 0;
};

class LoggedCopy : public HostCopy {
 public:
  LoggedCopy(Log& log, int run, NamedTensors outputs) : log_(log), run_(run), outputs_(std::move(outputs)) {}
  std::vector<at::Tensor> wait() override {
    log_.events.push_back(fmt::format("digest {}", run_));
    return ImmediateCopier().copy(outputs_)->wait();
  }

 private:
  Log& log_;
  int run_;
  NamedTensors outputs_;
};

class FakeStreamCopier : public OutputCopier {
 public:
  explicit FakeStreamCopier(Log& log, int depth) : log_(log), depth_(depth) {}
  std::unique_ptr<HostCopy> copy(const NamedTensors& outputs) override {
    const int run = log_.copies++;
    log_.events.push_back(fmt::format("copy {}", run));
    return std::make_unique<LoggedCopy>(log_, run, outputs);
  }
  int depth() const override { return depth_; }

 private:
  Log& log_;
  int depth_;
};

// Launching a run is starting its timer; waiting for it is stopping the timer.
class LoggedTimer : public RunTimer {
 public:
  explicit LoggedTimer(Log& log) : log_(log) {}
  void start() override { log_.events.push_back(fmt::format("launch {}", log_.runs)); }
  std::int64_t stop_ns() override {
    log_.events.push_back(fmt::format("wait {}", log_.runs++));
    return 1000;
  }

 private:
  Log& log_;
};

std::size_t position(const Log& log, const std::string& event) {
  const auto it = std::find(log.events.begin(), log.events.end(), event);
  EXPECT_NE(it, log.events.end()) << event;
  return static_cast<std::size_t>(it - log.events.begin());
}

ProcessObservation run_logged(const Cell& cell, int depth, int repeats, Log& log) {
  WorkerRequest request;
  request.repeats = repeats;
  request.warmup = 1;
  request.process = 1;  // no timing-only runs: only the determinism runs are logged
  apply_process_settings(process_settings(cell.settings));
  NullTracer tracer("not traced in this test");
  LoggedTimer timer(log);
  FakeStreamCopier copier(log, depth);
  return run_cell(cell, request, tracer, timer, nullptr, &copier);
}

TEST(DigestPipeline, ARunIsDigestedWhileTheNextExecutes) {
  Log log;
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  const auto observation = run_logged(cell, 1, 4, log);
  ASSERT_EQ(observation.runs.size(), 5u);
  for (int i = 0; i + 1 < 5; ++i) {
    const auto digest = position(log, fmt::format("digest {}", i));
    EXPECT_GT(digest, position(log, fmt::format("launch {}", i + 1))) << "run " << i << " hashed before the next ran";
    EXPECT_LT(digest, position(log, fmt::format("wait {}", i + 1))) << "run " << i << " hashed after the next ended";
    EXPECT_GT(position(log, fmt::format("copy {}", i)), position(log, fmt::format("wait {}", i)));
  }
  EXPECT_GT(position(log, "digest 4"), position(log, "wait 4"));  // the last one after the loop
  // Depth 0 (the CPU): each run digested before the next is launched; the same digests.
  Log at_once;
  const auto direct = run_logged(cell, 0, 4, at_once);
  for (int i = 0; i + 1 < 5; ++i)
    EXPECT_LT(position(at_once, fmt::format("digest {}", i)), position(at_once, fmt::format("launch {}", i + 1)));
  for (std::size_t i = 0; i < direct.runs.size(); ++i) EXPECT_EQ(observation.runs[i].digest, direct.runs[i].digest);
}

// index_put_ with accumulate on two threads diverges nearly every run (worker_test.cc): overlapped,
// the first difference is found one run later, and the verdict is the same. The race needs both threads
// at once, which a loaded machine may not give them: a cell that saw none is run again (at most 3 times).
TEST(DigestPipeline, TheFirstDifferenceStillStopsTheRuns) {
  const auto cell = make_cell("index_put_accumulate", "f32", {{"threads", "2"}});
  Log log;
  auto observation = run_logged(cell, 1, 30, log);
  auto verdict = judge(cell, {observation});
  for (int attempt = 1; attempt < 3 && verdict.kind != VerdictKind::nondeterministic; ++attempt) {
    log = Log{};
    observation = run_logged(cell, 1, 30, log);
    verdict = judge(cell, {observation});
  }
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_TRUE(verdict.stopped_early);
  EXPECT_LT(observation.runs.size(), 31u);
  ASSERT_TRUE(verdict.divergence);
  EXPECT_GT(verdict.divergence->differing_elements, 0);
  // Every launched run was digested, in order.
  EXPECT_EQ(log.copies, log.runs);
  EXPECT_EQ(static_cast<int>(observation.runs.size()), log.runs);
}

}  // namespace
}  // namespace repro_audit
