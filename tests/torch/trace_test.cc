#include <gtest/gtest.h>

#include <algorithm>

#include "apply/settings_apply.h"
#include "config/settings.h"
#include "report/report.h"
#include "test_tools.h"
#include "trace/record_function_tracer.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

using testing::make_cell;

// Plays back scripted kernel sequences, one per run, cycling.
class FakeTracer : public Tracer {
 public:
  explicit FakeTracer(std::vector<std::vector<KernelRecord>> script) : script_(std::move(script)) {}
  std::string unavailable_reason() const override { return ""; }
  void begin_run() override { ++begun_; }
  std::vector<KernelRecord> end_run() override { return script_[ended_++ % script_.size()]; }
  int begun_ = 0;
  std::size_t ended_ = 0;

 private:
  std::vector<std::vector<KernelRecord>> script_;
};

TEST(FakeTracer, DrivesTheWorkerAndSelectionVariesIsRaised) {
  const std::vector<KernelRecord> winograd = {{"cudnn::winograd<float>", "8,1,1", "256,1,1"}};
  const std::vector<KernelRecord> implicit_gemm = {{"cudnn::implicit_gemm<float>", "16,1,1", "128,1,1"}};
  FakeTracer tracer({winograd, winograd, implicit_gemm});
  SteadyClockTimer timer;
  WorkerRequest request;
  request.repeats = 5;
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  const auto observation = run_cell(cell, request, tracer, timer);
  // Warm-up too (cuDNN benchmark mode chooses on the first call); the timing-only runs after are not
  // traced: no tracing cost inside a timed run.
  EXPECT_EQ(tracer.begun_, 6);
  EXPECT_FALSE(observation.timing_ns.empty());
  ASSERT_EQ(observation.runs.size(), 6u);
  EXPECT_EQ(observation.runs[0].kernel_digest, kernel_sequence_digest(winograd));
  EXPECT_EQ(observation.runs[2].kernel_digest, kernel_sequence_digest(implicit_gemm));
  ASSERT_EQ(observation.kernel_sequences.size(), 2u);  // the distinct sequences seen, each once
  EXPECT_EQ(observation.kernel_sequences[1].second[0].name, "cudnn::implicit_gemm<float>");
  const auto verdict = judge(cell, {observation});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);  // same bits, different kernels
  EXPECT_TRUE(verdict.kernels_varied);
}

TEST(FakeTracer, OneSequenceEverywhereIsNotVaried) {
  FakeTracer tracer({{{"k", "1,1,1", "1,1,1"}}});
  SteadyClockTimer timer;
  WorkerRequest request;
  request.repeats = 3;
  const auto cell = make_cell("sum", "f32", {{"threads", "1"}});
  const auto first = run_cell(cell, request, tracer, timer);
  const auto second = run_cell(cell, request, tracer, timer);
  const auto verdict = judge(cell, {first, second});
  EXPECT_FALSE(verdict.kernels_varied);
  EXPECT_EQ(verdict.kernel_digest, kernel_sequence_digest({{"k", "1,1,1", "1,1,1"}}));
}

TEST(FakeTracer, AnUnavailableTracerIsReportedWithItsReason) {
  NullTracer tracer("CUPTI: CUPTI_ERROR_NOT_INITIALIZED");
  SteadyClockTimer timer;
  WorkerRequest request;
  request.repeats = 2;
  const auto observation = run_cell(make_cell("sum", "f32", {}), request, tracer, timer);
  EXPECT_EQ(observation.status, ObservationStatus::ok);
  EXPECT_EQ(observation.trace_unavailable, "CUPTI: CUPTI_ERROR_NOT_INITIALIZED");
  EXPECT_TRUE(observation.kernel_sequences.empty());
  EXPECT_TRUE(observation.runs[0].kernel_digest.empty());
}

std::vector<std::string> names_of(const ProcessObservation& observation) {
  std::vector<std::string> names;
  for (const auto& record : observation.kernel_sequences.at(0).second) names.push_back(record.name);
  return names;
}

TEST(RecordFunctionTracer, SeesTheAtenOpsOfIndexPutAndWhatStrictAdds) {
  apply_process_settings({{"threads", "2"}});
  const auto tracer = make_record_function_tracer();
  SteadyClockTimer timer;
  WorkerRequest request;
  request.repeats = 2;
  const auto plain = run_cell(make_cell("index_put_accumulate", "f32", {{"threads", "2"}}), request, *tracer, timer);
  const auto strict =
      run_cell(make_cell("index_put_accumulate", "f32", {{"threads", "2"}, {"deterministic_algorithms", "on"}}),
               request, *tracer, timer);
  ASSERT_TRUE(plain.trace_unavailable.empty());
  const auto plain_names = names_of(plain);
  const auto strict_names = names_of(strict);
  EXPECT_NE(std::find(plain_names.begin(), plain_names.end(), "aten::index_put_"), plain_names.end());
  EXPECT_NE(std::find(plain_names.begin(), plain_names.end(), "aten::_index_put_impl_"), plain_names.end());
  // Deterministic mode changes what runs: fill_uninitialized_memory fills the clone's new storage
  // first. (The sort-based accumulation itself is a kernel inside _index_put_impl_, not an ATen op.)
  EXPECT_NE(plain.runs[0].kernel_digest, strict.runs[0].kernel_digest);
  EXPECT_EQ(std::count(plain_names.begin(), plain_names.end(), "aten::fill_"), 0);
  EXPECT_EQ(std::count(strict_names.begin(), strict_names.end(), "aten::fill_"), 1);
  // Ops that digesting the outputs dispatches are not part of the run.
  EXPECT_EQ(std::count(plain_names.begin(), plain_names.end(), "aten::contiguous"), 0);
}

}  // namespace
}  // namespace repro_audit
