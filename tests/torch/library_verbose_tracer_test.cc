// The CPU tracer (make_tracer("cpu")): ATen ops, then the oneDNN primitives and MKL calls of each run.
// Nothing here names an ISA: implementations differ between hosts.
#include "trace/library_verbose_tracer.h"

#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "apply/settings_apply.h"
#include "protocol/worker_protocol.h"
#include "supervisor/process_launcher.h"
#include "test_paths.h"
#include "test_tools.h"
#include "trace/mkl_clock.h"
#include "trace/tracer_factory.h"

namespace repro_audit {
namespace {

using testing::make_cell;

std::vector<std::string> names(const std::vector<KernelRecord>& records) {
  std::vector<std::string> result;
  for (const auto& record : records) result.push_back(record.name);
  return result;
}

bool has_prefix(const std::vector<std::string>& names, const std::string& prefix) {
  return std::any_of(names.begin(), names.end(), [&](const auto& name) { return name.starts_with(prefix); });
}

ProcessObservation run_traced(Tracer& tracer, const std::string& probe, const std::string& variant) {
  apply_process_settings({{"threads", "1"}});
  SteadyClockTimer timer;
  WorkerRequest request;
  request.warmup = 1;
  request.repeats = 2;
  return run_cell(make_cell(probe, variant, {{"threads", "1"}}), request, tracer, timer);
}

// The warm-up run (which meets each library's one-time banner) and the timed runs agree.
void expect_one_sequence(const ProcessObservation& observation) {
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  ASSERT_EQ(observation.runs.size(), 3u);
  EXPECT_EQ(observation.kernel_sequences.size(), 1u);
  for (const auto& run : observation.runs) EXPECT_EQ(run.kernel_digest, observation.runs[0].kernel_digest);
}

TEST(LibraryVerboseTracer, ConvolutionRecordsTheOneDnnPrimitivesAfterTheAtenOps) {
  const auto tracer = make_tracer("cpu");
  const auto observation = run_traced(*tracer, "conv", "f32");
  expect_one_sequence(observation);
  const auto records = names(observation.kernel_sequences.at(0).second);
  EXPECT_TRUE(has_prefix(records, "onednn:convolution ")) << records.size() << " records";
  EXPECT_NE(std::find(records.begin(), records.end(), "aten::conv2d"), records.end());
  const auto first_library =
      std::find_if(records.begin(), records.end(), [](const auto& name) { return name.starts_with("onednn:"); });
  EXPECT_TRUE(std::all_of(first_library, records.end(), [](const auto& name) { return !name.starts_with("aten::"); }));
}

TEST(LibraryVerboseTracer, MatmulRecordsTheMklCallWithItsReproducibilityMode) {
  const auto tracer = make_tracer("cpu");
  const auto observation = run_traced(*tracer, "matmul", "f32");
  expect_one_sequence(observation);
  const auto records = names(observation.kernel_sequences.at(0).second);
  const auto call =
      std::find_if(records.begin(), records.end(), [](const auto& name) { return name.starts_with("mkl:SGEMM("); });
  ASSERT_NE(call, records.end());
  EXPECT_NE(call->find(" CNR:"), std::string::npos) << *call;
  EXPECT_NE(call->find(" NThr:1"), std::string::npos) << *call;
}

// MKL measures its clock's frequency only while the variable holds its unmeasured value, spinning until
// time() ticks over (trace/mkl_clock.h). Preset, it is the one MKL's own reading returns; and it is what
// MKL measures, in the same unit (MKL may time more than its verbose lines by it).
TEST(MklClock, APresetFrequencyIsWhatMklMeasuresAndMklTakesIt) {
  const auto frequency = mkl_clock_frequency_variable();
  if (!frequency.value) GTEST_SKIP() << "this libtorch's MKL has no clock frequency to preset";
  using Reader = double (*)();
  const auto read = reinterpret_cast<Reader>(::dlsym(RTLD_DEFAULT, "mkl_serv_get_clocks_frequency"));
  ASSERT_NE(read, nullptr);
  const double before = *frequency.value;
  *frequency.value = frequency.unmeasured;  // as in a process whose MKL has timed no call yet
  const double measured = read();
  ASSERT_GT(measured, 0.0);
  *frequency.value = frequency.unmeasured;
  ASSERT_TRUE(preset_mkl_clock_frequency());
  const double preset = *frequency.value;
  EXPECT_LT(std::abs(preset / measured - 1.0), 0.02) << "preset " << preset << " GHz, MKL measured " << measured;
  EXPECT_EQ(read(), preset) << "MKL measured its clock again";
  EXPECT_FALSE(preset_mkl_clock_frequency()) << "a frequency already there is kept";
  EXPECT_EQ(*frequency.value, preset);
  *frequency.value = before == frequency.unmeasured ? preset : before;
}

// conv/f32 reaches oneDNN on every host (above); its bf16 variant did too, but without bf16 arithmetic
// (AVX2 only) oneDNN computes it in a reference kernel, seconds a run.
TEST(LibraryVerboseTracer, TwoCellsOfTheSameProbeGiveTheSameRecordsAndTheSameBits) {
  const auto tracer = make_tracer("cpu");
  const auto first = run_traced(*tracer, "conv", "f32");
  const auto second = run_traced(*tracer, "conv", "f32");
  expect_one_sequence(first);
  expect_one_sequence(second);
  EXPECT_TRUE(has_prefix(names(first.kernel_sequences.at(0).second), "onednn:")) << "no library record compared";
  EXPECT_EQ(first.runs[0].kernel_digest, second.runs[0].kernel_digest);
  EXPECT_EQ(names(first.kernel_sequences.at(0).second), names(second.kernel_sequences.at(0).second));
  // Verbose mode changes what the libraries print, not what they compute.
  apply_process_settings({{"threads", "1"}});
  WorkerRequest request;
  request.repeats = 1;
  const auto untraced = testing::run_untraced(make_cell("conv", "f32", {{"threads", "1"}}), request);
  EXPECT_EQ(untraced.runs.at(0).digest, first.runs[0].digest);
}

TEST(LibraryVerboseTracer, AnOpWithoutLibraryCallsAddsNothing) {
  const auto tracer = make_tracer("cpu");
  const auto observation = run_traced(*tracer, "sum", "f32");
  expect_one_sequence(observation);
  for (const auto& name : names(observation.kernel_sequences.at(0).second)) EXPECT_TRUE(name.starts_with("aten::"));
}

// A run that throws never reaches end_run; the next begin_run must still give stdout back first.
TEST(LibraryVerboseTracer, OtherOutputOfARunIsPassedOnAndAnUnfinishedRunIsClosed) {
  auto tracer = make_tracer("cpu");
  const auto a = at::randn({64, 64});
  ::testing::internal::CaptureStdout();
  tracer->begin_run();
  std::printf("printed in an unfinished run\n");
  tracer->begin_run();
  std::printf("printed in a run\n");
  at::mm(a, a);
  const auto records = names(tracer->end_run());
  std::printf("printed after it\n");
  std::fflush(stdout);
  const auto printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "printed in an unfinished run\nprinted in a run\nprinted after it\n");
  EXPECT_TRUE(has_prefix(records, "mkl:SGEMM(N,N,64,64,64,"));
  EXPECT_TRUE(has_prefix(records, "aten::mm"));
}

// What one `repro-audit worker` process records for matmul/f32, started with `environment`.
ProcessObservation matmul_in_worker(const std::map<std::string, std::string>& environment) {
  WorkerRequest request;
  request.repeats = 2;
  request.process_settings = {{"threads", "1"}};
  request.cells = {make_cell("matmul", "f32", {{"threads", "1"}})};
  ProcessLauncher launcher(test_paths::kBinary, ::testing::TempDir());
  const auto worker = launcher.start(request_to_json(request).dump() + "\n", environment);
  std::optional<ProcessObservation> observation;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (std::string line; worker->read_line(line, deadline) == Worker::ReadStatus::line;)
    if (const auto event = parse_event(line); event && event->kind == WorkerEvent::Kind::cell)
      observation = event->observation;
  const auto ended = worker->wait();
  EXPECT_TRUE(observation) << ended << "\n" << worker->log_tail(4000);
  return observation.value_or(ProcessObservation{});
}

std::string mkl_call(const ProcessObservation& observation) {
  for (const auto& name : names(observation.kernel_sequences.at(0).second))
    if (name.starts_with("mkl:SGEMM(")) return name;
  return "";
}

// How an MKL_CBWR change shows as KERNELS-CHANGED: the same cell, another kernel digest.
TEST(LibraryVerboseTracer, MklCbwrInTheWorkersEnvironmentChangesTheMklRecord) {
  const auto plain = matmul_in_worker({{"MKL_CBWR", ""}});
  const auto again = matmul_in_worker({{"MKL_CBWR", ""}});
  const auto compatible = matmul_in_worker({{"MKL_CBWR", "COMPATIBLE"}});
  for (const auto* observation : {&plain, &again, &compatible}) expect_one_sequence(*observation);
  ASSERT_FALSE(plain.kernel_sequences.empty() || compatible.kernel_sequences.empty());
  EXPECT_EQ(again.runs[0].kernel_digest, plain.runs[0].kernel_digest);  // stable across processes
  EXPECT_NE(compatible.runs[0].kernel_digest, plain.runs[0].kernel_digest);
  EXPECT_NE(mkl_call(compatible).find(" CNR:COMPATIBLE"), std::string::npos) << mkl_call(compatible);
  EXPECT_EQ(mkl_call(plain).find(" CNR:COMPATIBLE"), std::string::npos) << mkl_call(plain);
}

}  // namespace
}  // namespace repro_audit
