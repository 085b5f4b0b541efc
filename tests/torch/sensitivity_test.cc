// The sensitivity check (probe/sensitivity.h) on real ops: what it measures of a real probe, the
// inputs it must call insensitive (exact sums, one contribution per output), the declarations it must
// refuse, and the worker's first process carrying it into the observation.
#include "probe/sensitivity.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "apply/settings_apply.h"
#include "probe/sensitivity_check.h"
#include "test_tools.h"

namespace repro_audit {
namespace {

// index_add into 64 slots from 4096 rows; `kind` picks the inputs.
RunFunction index_add_of(ProbeContext& context, const std::string& kind) {
  const std::int64_t slots = 64, rows = 4096;
  const auto base = at::zeros({slots, 8});
  const auto index =
      context.input("index", kind == "one_each" ? at::arange(slots, at::kLong) : context.randint(slots, {rows}));
  const auto n = index.size(0);
  // Integer-valued floats add exactly in any order.
  const auto source = context.input(
      "source", kind == "integers" ? context.randint(-8, 8, {n, 8}).to(at::kFloat) : context.randn({n, 8}));
  const auto unused = context.input("unused", context.randn({n, 8}));
  return [=] { return Outputs{{"output", base.index_add(0, index, source)}}; };
}

ProbeBuilder test_probe(const std::string& name, const std::string& kind) {
  return ProbeBuilder(name)
      .describe("a sensitivity test")
      .variant(Variant(DType::f32))
      .on_request_only()
      .no_python("a test probe")
      .prepare([kind](ProbeContext& context) { return index_add_of(context, kind); });
}

const bool registered_test_probes =
    register_probe(test_probe("test.sensitive", "spread").accumulates("output", "source")) &&
    register_probe(test_probe("test.exact_sums", "integers").accumulates("output", "source")) &&
    register_probe(test_probe("test.one_each", "one_each").accumulates("output", "source")) &&
    register_probe(test_probe("test.wrong_operand", "spread").accumulates("output", "unused")) &&
    register_probe(test_probe("test.wrong_output", "spread").accumulates("result", "source")) &&
    register_probe(test_probe("test.no_such_input", "spread").accumulates("output", "nope"));

Sensitivity measured(const std::string& probe) {
  const auto* definition = find_registered_probe(probe);
  const auto result = measure_sensitivity(*definition, definition->info.variants.at(0), 0, kCurrentInputScheme);
  EXPECT_TRUE(result);
  return result.value_or(Sensitivity{});
}

TEST(SensitivityCheck, SpreadValuesChangeBitsUnderOtherOrders) {
  const auto first = measured("test.sensitive");
  EXPECT_EQ(first.output, "output");
  EXPECT_EQ(first.elements, 64 * 8);
  EXPECT_EQ(first.orders, 3);
  EXPECT_GT(first.fraction(), 0.5) << first.changed;
  EXPECT_FALSE(first.insensitive());
  EXPECT_EQ(measured("test.sensitive").changed, first.changed) << "the same inputs, the same orders";
}

TEST(SensitivityCheck, ExactSumsAndSingleContributionsAreInsensitive) {
  const auto exact = measured("test.exact_sums");
  EXPECT_EQ(exact.changed, 0);
  EXPECT_TRUE(exact.insensitive());
  const auto single = measured("test.one_each");
  EXPECT_EQ(single.changed, 0);
  EXPECT_TRUE(single.insensitive());
}

TEST(SensitivityCheck, ADeclarationThatDoesNotFitTheProbeIsAnErrorNotAMeasurement) {
  for (const auto* probe : {"test.wrong_operand", "test.wrong_output", "test.no_such_input"}) {
    const auto* definition = find_registered_probe(probe);
    EXPECT_THROW(measure_sensitivity(*definition, definition->info.variants.at(0), 0, kCurrentInputScheme),
                 std::runtime_error)
        << probe;
  }
  const auto results = check_sensitivities({"test.wrong_operand", "test.sensitive"}, 0);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& result : results)
    if (result.probe == "test.wrong_operand") {
      EXPECT_FALSE(result.sensitivity);
      EXPECT_NE(result.problem.find("not zero with every contribution masked"), std::string::npos) << result.problem;
    } else {
      EXPECT_TRUE(result.sensitivity);
    }
}

TEST(SensitivityCheck, AProbeWhoseOrderIsInsideOneKernelIsListedAsNotChecked) {
  const auto results = check_sensitivities({"ctc_loss"}, 0);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& result : results) {
    EXPECT_FALSE(result.sensitivity) << "ctc_loss's order is inside its kernel";
    EXPECT_FALSE(result.skipped.empty());
  }
}

// The variants are measured on several threads at once, each op on its one thread: the same results, in
// the catalogue's order, as each variant measured alone at one thread, and the caller's thread count kept.
TEST(SensitivityCheck, VariantsMeasuredSideBySideGiveWhatEachGivesAloneInOrder) {
  const std::vector<std::string> probes = {"sum", "index_add", "bincount", "test.sensitive", "test.exact_sums"};
  const int before = at::get_num_threads();  // the shard's other tests keep theirs
  at::set_num_threads(2);
  const auto results = check_sensitivities(probes, 0, 4);
  EXPECT_EQ(at::get_num_threads(), 2);
  at::set_num_threads(1);
  std::size_t i = 0;
  for (const auto& probe : registered_probes()) {
    if (std::find(probes.begin(), probes.end(), probe.info.name) == probes.end()) continue;
    for (const auto& variant : probe.info.variants) {
      ASSERT_LT(i, results.size());
      EXPECT_EQ(results[i].probe + "/" + results[i].variant, probe.info.name + "/" + variant.name);
      const auto alone = measure_sensitivity(probe, variant, 0, kCurrentInputScheme);
      ASSERT_TRUE(alone && results[i].sensitivity) << results[i].probe << "/" << results[i].variant;
      EXPECT_EQ(results[i].sensitivity->changed, alone->changed) << results[i].probe << "/" << results[i].variant;
      EXPECT_EQ(results[i].sensitivity->elements, alone->elements);
      ++i;
    }
  }
  EXPECT_EQ(i, results.size());
  EXPECT_GT(i, 6u);
  at::set_num_threads(before);
}

TEST(SensitivityCheck, TheProcessAskedCarriesItAndTheOthersDoNot) {
  WorkerRequest request;
  request.repeats = 2;
  request.warmup = 1;
  const auto cell = testing::make_cell("index_add", "f32", {{"threads", "1"}});
  apply_process_settings(process_settings(cell.settings));
  const auto first = testing::run_untraced(cell, request);
  ASSERT_TRUE(first.sensitivity);
  EXPECT_EQ(first.sensitivity->output, "output");
  EXPECT_EQ(first.sensitivity->elements, 256 * 64);
  EXPECT_FALSE(first.sensitivity->insensitive());
  request.process = 1;
  EXPECT_FALSE(testing::run_untraced(cell, request).sensitivity);
  request.sensitivity_process = 1;  // the supervisor asks the second process when there is one
  EXPECT_TRUE(testing::run_untraced(cell, request).sensitivity);
  request.sensitivity_elsewhere = {cell.key};  // another batch measures this variant
  EXPECT_FALSE(testing::run_untraced(cell, request).sensitivity);
}

}  // namespace
}  // namespace repro_audit
