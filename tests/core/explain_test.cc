#include "explain/explain.h"

#include <gtest/gtest.h>

#include <sstream>

#include "compare/baseline.h"
#include "explain/explanation_printers.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// A machine whose bits depend on the settings as `digest_of` says; counts the cells it runs.
struct FakeMachine {
  std::function<std::string(const Cell&)> digest_of;
  int cells_run = 0;
  double* clock = nullptr;  // advanced 10 s per cell when set

  Report operator()(const std::vector<Cell>& cells) {
    Report report;
    for (const auto& cell : cells) {
      ++cells_run;
      if (clock) *clock += 10;
      CellReport result;
      result.cell = cell;
      const auto digest = digest_of(cell);
      result.verdict.kind = digest.empty() ? VerdictKind::nondeterministic : VerdictKind::deterministic;
      result.verdict.digest = digest;
      result.verdict.digests_agree = !digest.empty();
      result.verdict.runs = 3;
      result.verdict.processes = 1;
      report.cells.push_back(result);
    }
    return report;
  }
};

Snapshot snapshot(const std::string& source, const std::string& key, const std::string& digest,
                  json environment = json::object()) {
  Snapshot result;
  result.source = source;
  result.environment = std::move(environment);
  SnapshotCell cell;
  cell.key = key;
  cell.verdict = digest.empty() ? VerdictKind::nondeterministic : VerdictKind::deterministic;
  cell.digest = digest;
  result.cells.push_back(cell);
  return result;
}

ExplainOptions options_here() {
  ExplainOptions options;
  options.runnable_capabilities = {"default", "avx2"};
  options.here = {{"aten_cpu_capability", "AVX2"}, {"threads", 2}, {"numerics_environment", json::object()}};
  return options;
}

// sum's bits on this AVX2 machine: the generic kernels give other bits than the vectorised ones.
std::string sum_bits(const Cell& cell) { return cell.settings.at("cpu_capability") == "default" ? "generic" : "avx2"; }

TEST(Explain, ABaselineRecordedWithTheGenericKernelsIsExplainedByCpuCapability) {
  const auto before =
      snapshot("before.yaml", "sum/f32@cpu", "generic",
               {{"aten_cpu_capability", "DEFAULT"}, {"numerics_environment", {{"ATEN_CPU_CAPABILITY", "default"}}}});
  FakeMachine machine{sum_bits};
  const auto explanation = explain(before, snapshot("after.json", "sum/f32@cpu", "avx2"), testing::test_catalogue(),
                                   std::ref(machine), options_here());
  ASSERT_EQ(explanation.cells.size(), 1u);
  const auto& cell = explanation.cells[0];
  EXPECT_EQ(cell.change, Change::drift);
  EXPECT_EQ(cell.side, "after");
  EXPECT_TRUE(cell.explained);
  ASSERT_EQ(cell.knobs.size(), 1u);
  EXPECT_EQ(cell.knobs[0].setting, "cpu_capability");
  EXPECT_EQ(cell.knobs[0].value, "default");
  EXPECT_NE(cell.knobs[0].reason.find("ATEN_CPU_CAPABILITY=default"), std::string::npos) << cell.knobs[0].reason;
  EXPECT_EQ(cell.pin, "pin ATEN_CPU_CAPABILITY=default on both to get identical bits");
  EXPECT_NE(cell.command.find("--axis cpu_capability=default"), std::string::npos) << cell.command;
  // Two stages: the as-is run, then every single knob at once (one worker per process setting).
  EXPECT_EQ(explanation.stages.size(), 2u);
  EXPECT_EQ(machine.cells_run, 1 + cell.tried);
  EXPECT_FALSE(explanation_failed(explanation));
}

TEST(Explain, BitsNoKnobGivesAreSaidToBeUnexplained) {
  FakeMachine machine{sum_bits};
  const auto explanation =
      explain(snapshot("before", "sum/f32@cpu", "from-elsewhere"), snapshot("after", "sum/f32@cpu", "avx2"),
              testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_EQ(explanation.cells.size(), 1u);
  EXPECT_FALSE(explanation.cells[0].explained);
  EXPECT_GT(explanation.cells[0].tried, 10);  // single knobs and then pairs
  EXPECT_NE(explanation.cells[0].note.find("not explained by any knob tried"), std::string::npos);
  EXPECT_TRUE(explanation_failed(explanation));
  std::ostringstream out;
  print_explanation(explanation, out);
  EXPECT_NE(out.str().find("not explained by any knob tried"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("search: "), std::string::npos);
}

TEST(Explain, TwoKnobsTogetherAreFoundWhenNoSingleOneDoes) {
  FakeMachine machine{[](const Cell& cell) {
    return cell.settings.at("threads") == "1" && cell.settings.at("mkl_cbwr") == "COMPATIBLE" ? "old" : "new";
  }};
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "old"), snapshot("after", "sum/f32@cpu", "new"),
                                   testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_TRUE(explanation.cells.at(0).explained);
  const auto& knobs = explanation.cells[0].knobs;
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(explanation.cells[0].pin, knobs[0].setting == "threads"
                                          ? "pin threads=1 and MKL_CBWR=COMPATIBLE on both to get identical bits"
                                          : "pin MKL_CBWR=COMPATIBLE and threads=1 on both to get identical bits");
}

TEST(Explain, TheTimeLimitBoundsTheSearchAndIsReported) {
  double now = 0;
  FakeMachine machine{[](const Cell&) { return std::string("new"); }, 0, &now};
  auto options = options_here();
  options.clock = [&] { return now; };
  options.time_limit_seconds = 45;  // the as-is run takes 10 s: three more cells fit
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "old"), snapshot("after", "sum/f32@cpu", "new"),
                                   testing::test_catalogue(), std::ref(machine), options);
  EXPECT_TRUE(explanation.time_limit_reached);
  EXPECT_EQ(machine.cells_run, 4);
  EXPECT_NE(explanation.cells.at(0).note.find("time limit"), std::string::npos);
}

TEST(Explain, WithoutAfterTheCellsAreAuditedHereFirst) {
  FakeMachine machine{sum_bits};
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "generic"), std::nullopt,
                                   testing::test_catalogue(), std::ref(machine), options_here());
  EXPECT_EQ(explanation.after_source, "this machine");
  EXPECT_EQ(explanation.compared, 1);
  ASSERT_TRUE(explanation.cells.at(0).explained);
  EXPECT_EQ(explanation.stages.front().rfind("audit of this machine", 0), 0u) << explanation.stages.front();
}

TEST(Explain, AMachineGivingTheOldBitsLooksForTheNewOnes) {
  FakeMachine machine{sum_bits};
  const auto explanation =
      explain(snapshot("before", "sum/f32@cpu", "avx2"), snapshot("after", "sum/f32@cpu", "generic"),
              testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_TRUE(explanation.cells.at(0).explained);
  EXPECT_EQ(explanation.cells[0].side, "before");
  EXPECT_EQ(explanation.cells[0].target, "after");
}

TEST(Explain, NewNondeterminismIsExplainedByTheKnobThatRestoresTheOldBits) {
  FakeMachine machine{[](const Cell& cell) { return cell.settings.at("threads") == "1" ? "one" : ""; }};
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "one"), snapshot("after", "sum/f32@cpu", ""),
                                   testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_EQ(explanation.cells.size(), 1u);
  EXPECT_EQ(explanation.cells[0].change, Change::new_nondeterminism);
  ASSERT_TRUE(explanation.cells[0].explained);
  EXPECT_EQ(explanation.cells[0].knobs.at(0).setting, "threads");
}

TEST(Explain, ComparingNothingFails) {
  FakeMachine machine{sum_bits};
  const auto explanation =
      explain(snapshot("before", "sum/f32@cpu", "a"), snapshot("after", "sum/f32@cpu|threads=1", "a"),
              testing::test_catalogue(), std::ref(machine), options_here());
  EXPECT_EQ(explanation.compared, 0);
  EXPECT_TRUE(explanation_failed(explanation));
  EXPECT_EQ(machine.cells_run, 0);
}

TEST(Explain, CandidatesStayWithinWhatThisMachineRuns) {
  const auto cell = cell_from_key("sum/f32@cpu|threads=1", testing::test_catalogue());
  ASSERT_TRUE(cell);
  const auto knobs = candidate_knobs(*cell, json::object(), options_here());
  for (const auto& knob : knobs) {
    EXPECT_NE(knob.value, "avx512") << "this CPU cannot run it";
    EXPECT_NE(knob.value, "inherit");
    EXPECT_FALSE(knob.setting == "threads" && knob.value == "1") << "the cell's own value";
    EXPECT_NE(knob.setting, "cudnn_benchmark") << "not a CPU setting";
  }
  EXPECT_FALSE(cell_from_key("nosuch/f32@cpu", testing::test_catalogue()));
  EXPECT_FALSE(cell_from_key("sum/f32@cpu|nosuch=1", testing::test_catalogue()));
}

TEST(ExplainPrinters, EveryFormatCarriesTheKnobsAndThePin) {
  const auto before = snapshot("before.yaml", "sum/f32@cpu", "generic",
                               {{"numerics_environment", {{"ATEN_CPU_CAPABILITY", "default"}}}});
  FakeMachine machine{sum_bits};
  const auto explanation = explain(before, snapshot("after.json", "sum/f32@cpu", "avx2"), testing::test_catalogue(),
                                   std::ref(machine), options_here());
  const auto j = explanation_to_json(explanation);
  EXPECT_EQ(j.at("schema"), kExplanationSchema);
  EXPECT_EQ(j.at("cells")[0].at("knobs")[0].at("value"), "default");
  EXPECT_EQ(j.at("search").at("candidate_cells"), machine.cells_run);
  const auto markdown = render_explanation_markdown(explanation);
  EXPECT_NE(markdown.find("ATEN\\_CPU\\_CAPABILITY=default on both"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("--axis cpu_capability=default"), std::string::npos) << markdown;
  const auto html = render_explanation_html(explanation);
  EXPECT_NE(html.find("pin ATEN_CPU_CAPABILITY=default on both"), std::string::npos) << html;
  EXPECT_NE(html.find("--axis cpu_capability=default"), std::string::npos);
}

}  // namespace
}  // namespace repro_audit
