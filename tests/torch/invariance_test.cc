// Invariance probes on the CPU: the helpers place the anchor where they say, the controls are caught
// and cleared, and the real binary's verdict on one row of mm is what torch computes here.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "apply/settings_apply.h"
#include "probe/invariance.h"
#include "report/json_io.h"
#include "test_paths.h"
#include "test_tools.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

std::set<std::string> varied(const Verdict& verdict) {
  std::set<std::string> names;
  for (const auto& variation : verdict.variations) names.insert(variation.output);
  return names;
}

Verdict judge_cpu(const std::string& probe, const std::string& variant, int repeats = 2) {
  apply_process_settings({{"threads", "2"}});
  auto cell = testing::make_cell(probe, variant, {{"threads", "2"}});
  cell.invariance = find_registered_probe(probe)->info.invariance;
  WorkerRequest request;
  request.repeats = repeats;
  return judge(cell, {testing::run_untraced(cell, request)});
}

TEST(InvarianceControls, TheBatchVariantRowSumIsCaughtFromSevenRowsAndItsTwinIsClean) {
  const auto variant = judge_cpu("control.batch_variant_row_sum", "f32");
  ASSERT_EQ(variant.kind, VerdictKind::varies) << variant.message;
  // 1 partial sum below 4 rows, 4 below 16, 16 from there: batches of 2 and 3 match the row alone.
  const auto names = varied(variant);
  EXPECT_EQ(names.count("batch=2@first") + names.count("batch=3@middle"), 0u);
  EXPECT_EQ(names.count("batch=7@first") + names.count("batch=17@last") + names.count("batch=1024@middle"), 3u);
  for (const auto& variation : variant.variations) {
    EXPECT_EQ(variation.elements, 1);
    EXPECT_EQ(variation.differing_elements, 1);
    EXPECT_GT(variation.max_ulp_difference, 0);
  }
  const auto twin = judge_cpu("control.batch_invariant_row_sum", "f32");
  EXPECT_EQ(twin.kind, VerdictKind::invariant) << twin.message;
}

TEST(InvarianceHelpers, BatchesPutTheAnchorFirstInTheMiddleAndLast) {
  // A running sum over the batch: the anchor's slice equals the reference only where it comes first.
  const auto anchor = at::ones({1, 3});
  const auto fillers = at::full({6, 3}, 2.0);
  const auto outputs = batch_invariance(
      {anchor}, {fillers}, [](const std::vector<at::Tensor>& x) { return x[0].cumsum(0); }, {1, 2, 3, 7})();
  std::vector<std::string> names;
  for (const auto& [name, tensor] : outputs) {
    names.push_back(name);
    EXPECT_EQ(tensor.sizes(), anchor.sizes()) << name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"reference", "batch=2@first", "batch=2@last", "batch=3@first", "batch=3@middle",
                                      "batch=3@last", "batch=7@first", "batch=7@middle", "batch=7@last"}));
  // batch=7@middle: three fillers of 2 before the anchor of 1.
  EXPECT_TRUE(at::equal(outputs[7].second, at::full({1, 3}, 7.0)));
  EXPECT_TRUE(at::equal(outputs[6].second, anchor));
  EXPECT_THROW(batch_invariance({anchor}, {at::ones({2, 3})}, [](const auto& x) { return x[0]; }, {7}),
               std::invalid_argument);
}

TEST(InvarianceHelpers, OtherLayoutsHoldTheSameValuesInOtherStrides) {
  const auto input = at::randn({2, 3, 4, 5});
  std::set<std::string> names;
  for (const auto& [name, tensor] : other_layouts(input, /*channels_last=*/true)) {
    names.insert(name);
    EXPECT_TRUE(at::equal(tensor, input)) << name;
    EXPECT_FALSE(tensor.strides() == input.strides() && tensor.storage_offset() == 0) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"transposed", "strided-slice", "storage-offset-1", "channels-last"}));
}

// One row of x @ w against the same row in each batch, computed here with plain torch on the probe's
// seeded inputs: which batches change the bits is this host's business; the binary must agree.
std::set<std::string> mm_rows_that_differ() {
  at::set_num_threads(2);
  VariantInfo info;
  info.name = "f32";
  info.dtype = DType::f32;
  ProbeContext context(at::kCPU, 0, info);
  const auto w = context.randn({1024, 1024});
  const auto anchor = context.randn({1, 1024});
  const auto fillers = context.randn({1023, 1024});
  const auto alone = at::mm(anchor, w);
  std::set<std::string> differ;
  for (const std::int64_t size : default_batch_sizes())
    for (const auto& [where, offset] :
         std::vector<std::pair<std::string, std::int64_t>>{{"first", 0}, {"middle", size / 2}, {"last", size - 1}}) {
      if (size < 2 || (size < 3 && where == "middle")) continue;
      const auto batch =
          at::cat({fillers.narrow(0, 0, offset), anchor, fillers.narrow(0, offset, size - 1 - offset)}).contiguous();
      if (!at::equal(at::mm(batch, w).narrow(0, offset, 1), alone))
        differ.insert("batch=" + std::to_string(size) + "@" + where);
    }
  return differ;
}

// An export makes an invariance cell's inputs whatever the op can run here: under OnlyInputs the helpers
// skip the trial call that turns a missing kernel into an unsupported cell (without it, the op's error).
TEST(InvarianceHelpers, OnlyInputsSkipsTheTrialCallOfTheOp) {
  int calls = 0;
  const auto failing = [&](const at::Tensor&) -> at::Tensor {
    ++calls;
    TORCH_CHECK(false, "pack_vnni2 is only supported when avx512 is supported");
  };
  const auto failing_batch = [&](const std::vector<at::Tensor>& x) { return failing(x[0]); };
  const auto anchor = at::ones({1, 3}), fillers = at::ones({2, 3});
  EXPECT_THROW(layout_invariance(at::ones({2, 3}), failing), c10::Error);
  EXPECT_THROW(batch_invariance({anchor}, {fillers}, failing_batch, {1, 2, 3}), c10::Error);
  EXPECT_EQ(calls, 2);
  {
    const OnlyInputs only_inputs;
    EXPECT_TRUE(OnlyInputs::active());
    EXPECT_TRUE(layout_invariance(at::ones({2, 3}), failing));
    EXPECT_TRUE(batch_invariance({anchor}, {fillers}, failing_batch, {1, 2, 3}));
  }
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(OnlyInputs::active());
}

TEST(InvarianceBinary, TheBinarysVerdictOnOneRowOfMmIsWhatTorchComputesHere) {
  const auto expected = mm_rows_that_differ();
  const auto json = (std::filesystem::path(::testing::TempDir()) / "batch-mm.json").string();
  const auto command = std::string(test_paths::kBinary) +
                       " run --device cpu --probe batch.mm/f32 --profile default --axis threads=2 --repeats 2 "
                       "--processes 1 --json " +
                       json + " > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto report = load_report_file(json);
  ASSERT_EQ(report.cells.size(), 1u);
  const auto& verdict = report.cells[0].verdict;
  EXPECT_EQ(varied(verdict), expected);
  EXPECT_EQ(verdict.kind, expected.empty() ? VerdictKind::invariant : VerdictKind::varies) << verdict.message;
  for (const auto& variation : verdict.variations) EXPECT_GT(variation.differing_elements, 0) << variation.output;
  ASSERT_EQ(report.portability.size(), 1u);
  EXPECT_EQ(report.portability[0].invariance, expected.empty() ? "batch-invariant" : "");
}

// Run 0 holds the answer; the later runs only check agreement: at most 3 repeats after the warm-up.
TEST(InvarianceRuns, AnInvarianceCellRunsAtMostThreeRepeatsWhateverWasAsked) {
  apply_process_settings({{"threads", "1"}});
  auto cell = testing::make_cell("control.batch_invariant_row_sum", "f32", {{"threads", "1"}});
  cell.invariance = find_registered_probe(cell.probe)->info.invariance;
  WorkerRequest request;
  request.repeats = 10;
  const auto observation = testing::run_untraced(cell, request);
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  EXPECT_EQ(observation.runs.size(), 4u);  // the warm-up and 3 repeats
  request.repeats = 2;
  EXPECT_EQ(testing::run_untraced(cell, request).runs.size(), 3u);
  // A repeat probe takes every repeat asked for.
  const auto sum = testing::make_cell("sum", "f32", {{"threads", "1"}});
  request.repeats = 10;
  EXPECT_EQ(testing::run_untraced(sum, request).runs.size(), 11u);
}

}  // namespace
}  // namespace repro_audit
