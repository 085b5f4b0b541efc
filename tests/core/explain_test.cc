#include "explain/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "compare/baseline.h"
#include "explain/explanation_printers.h"
#include "sample_reports.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// A machine whose bits depend on the settings as `digest_of` says; counts the cells it runs.
struct FakeMachine {
  std::function<std::string(const Cell&)> digest_of;
  int cells_run = 0;
  double* clock = nullptr;                                // advanced 10 s per cell when set
  std::function<std::int64_t(const Cell&)> median_ns_of;  // timed runs, each within 5% of this, when set
  std::vector<double> seconds_given;                      // what each stage was given of the time limit

  Report operator()(const std::vector<Cell>& cells, double seconds_left) {
    Report report;
    seconds_given.push_back(seconds_left);
    for (const auto& cell : cells) {
      if (clock && seconds_left < 10) break;  // no time for another cell: the runner stops
      ++cells_run;
      if (clock) {
        *clock += 10;
        seconds_left -= 10;
      }
      CellReport result;
      result.cell = cell;
      const auto digest = digest_of(cell);
      result.verdict.kind = digest.empty() ? VerdictKind::nondeterministic : VerdictKind::deterministic;
      result.verdict.digest = digest;
      result.verdict.digests_agree = !digest.empty();
      result.verdict.runs = 3;
      result.verdict.processes = 1;
      if (median_ns_of) {
        const auto median = median_ns_of(cell);
        result.verdict.timing = {median, median * 97 / 100, median * 103 / 100, 20};
      }
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
  // Three stages: the as-is run, the portable settings, then the knobs the environment names; that
  // explains it, and the search says the rest was not needed.
  EXPECT_EQ(explanation.stages.size(), 3u);
  EXPECT_NE(explanation.stopped_early.find("every changed cell was explained by the knobs the environment and "
                                           "kernels name: "),
            std::string::npos)
      << explanation.stopped_early;
  EXPECT_EQ(machine.cells_run, 2 + cell.tried);
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
  options.time_limit_seconds = 45;  // the as-is and portable runs take 10 s each: two more cells fit
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "old"), snapshot("after", "sum/f32@cpu", "new"),
                                   testing::test_catalogue(), std::ref(machine), options);
  EXPECT_TRUE(explanation.time_limit_reached);
  EXPECT_EQ(machine.cells_run, 4);
  EXPECT_NE(explanation.cells.at(0).note.find("time limit"), std::string::npos);
}

// Every stage is given what is left of the limit, counted from the command's start: none runs past it.
TEST(Explain, EveryStageGetsWhatIsLeftOfTheTimeLimitFromTheCommandsStart) {
  double now = 100;
  FakeMachine machine{[](const Cell&) { return std::string("new"); }, 0, &now};
  auto options = options_here();
  options.clock = [&] { return now; };
  options.started = 95;  // loading the reports took 5 s
  options.time_limit_seconds = 30;
  const auto explanation = explain(snapshot("before", "sum/f32@cpu", "old"), snapshot("after", "sum/f32@cpu", "new"),
                                   testing::test_catalogue(), std::ref(machine), options);
  // As is (25 s left), portable settings (15 s left); the 5 s left hold no knob's 10 s.
  EXPECT_EQ(machine.seconds_given, (std::vector<double>{25, 15}));
  EXPECT_TRUE(explanation.time_limit_reached);
  EXPECT_LE(explanation.seconds, 30);
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
  // Ranks of 2 or more would make the probe's cell a collective one: never tried.
  EXPECT_TRUE(std::none_of(knobs.begin(), knobs.end(), [](const Knob& knob) { return knob.setting == "ranks"; }));
  EXPECT_FALSE(cell_from_key("nosuch/f32@cpu", testing::test_catalogue()));
  EXPECT_FALSE(cell_from_key("sum/f32@cpu|nosuch=1", testing::test_catalogue()));
}

// The randomness half's settings are knobs of py cells only: a probe's cell never tries them.
TEST(Explain, TheRecipesSeedsAreKnobsOfPyCellsOnly) {
  const auto probe = cell_from_key("sum/f32@cpu|threads=1", testing::test_catalogue());
  ASSERT_TRUE(probe);
  const auto has = [](const std::vector<Knob>& knobs, const std::string& setting, const std::string& value) {
    return std::any_of(knobs.begin(), knobs.end(),
                       [&](const Knob& knob) { return knob.setting == setting && knob.value == value; });
  };
  for (const auto& setting : {"seed_random", "seed_numpy", "loader_generator"})
    EXPECT_FALSE(has(candidate_knobs(*probe, json::object(), options_here()), setting, "on")) << setting;
  auto py = *probe;
  py.model = ModelSpec{};
  py.model->callable = "train.py:make";
  for (const auto& spec : setting_specs())
    if (spec.py_cells_only) py.settings[spec.name] = spec.default_value;
  const auto knobs = candidate_knobs(py, json::object(), options_here());
  EXPECT_TRUE(has(knobs, "seed_random", "on"));
  EXPECT_TRUE(has(knobs, "seed_numpy", "on"));
  EXPECT_TRUE(has(knobs, "python_hash_seed", "0"));
  EXPECT_TRUE(has(knobs, "loader_workers", "0"));
  EXPECT_FALSE(has(knobs, "python_hash_seed", "inherit")) << "that is this machine as is";
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

std::vector<KernelRecord> kernel_records(const std::vector<std::string>& names) {
  std::vector<KernelRecord> result;
  for (const auto& name : names) result.push_back({name, "", ""});
  return result;
}

// Another vendor's host: MKL took its AVX-512 path there, AVX2 here; no knob gives the other bits.
std::pair<Snapshot, Snapshot> cross_vendor(const std::string& key, const std::string& before_inputs,
                                           const std::string& after_inputs) {
  auto before = snapshot("intel.yaml", key, "intel-bits", {{"cpu_vendor", "GenuineIntel"}});
  auto after = snapshot("amd.json", key, "amd-bits", {{"cpu_vendor", "AuthenticAMD"}});
  before.cells[0].kernel_digest = std::string(32, 'b');
  before.cells[0].kernels =
      std::make_shared<std::vector<KernelRecord>>(kernel_records(testing::mkl_sgemm_kernels(true)));
  before.cells[0].input_digest = before_inputs;
  after.cells[0].kernel_digest = std::string(32, 'a');
  after.cells[0].kernels =
      std::make_shared<std::vector<KernelRecord>>(kernel_records(testing::mkl_sgemm_kernels(false)));
  after.cells[0].input_digest = after_inputs;
  return {before, after};
}

TEST(Explain, WhenNoKnobReproducesItSaysInputsKernelsByNameWhatTheyKeyOnAndWhatPinningCosts) {
  const auto [before, after] = cross_vendor("sum/f32@cpu", std::string(32, '1'), std::string(32, '1'));
  FakeMachine machine{[](const Cell& cell) {
                        return cell.settings.at("mkl_cbwr") == "COMPATIBLE" ? std::string("compatible") : "amd-bits";
                      },
                      0, nullptr,
                      [](const Cell& cell) -> std::int64_t {
                        return cell.settings.at("mkl_cbwr") == "COMPATIBLE" ? 2000000 : 1000000;
                      }};
  const auto explanation = explain(before, after, testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_EQ(explanation.cells.size(), 1u);
  const auto& cell = explanation.cells[0];
  EXPECT_FALSE(cell.explained);
  EXPECT_EQ(cell.inputs, "equal");
  EXPECT_EQ(cell.kernels, "MKL code path AVX-512 (DL Boost) -> AVX2");
  ASSERT_EQ(cell.kernel_changes.size(), 1u);
  EXPECT_EQ(cell.kernel_changes[0].library, "MKL");
  ASSERT_EQ(cell.keyed_on.size(), 1u);
  EXPECT_EQ(cell.keyed_on[0].rfind("MKL keys on CPU id (GenuineIntel -> AuthenticAMD), CPU flags (unchanged)", 0), 0u)
      << cell.keyed_on[0];
  ASSERT_EQ(cell.library_pins.size(), 1u);
  EXPECT_NE(cell.library_pins[0].find("MKL_CBWR=COMPATIBLE"), std::string::npos) << cell.library_pins[0];
  EXPECT_EQ(cell.portable_digest, "compatible");
  EXPECT_NE(cell.portable_note.find("the cell is portable if the other host gives the same"), std::string::npos)
      << cell.portable_note;
  EXPECT_EQ(cell.portable_command,
            "repro-audit run --probe sum/f32 --matrix full --axis cpu_capability=default --axis "
            "mkl_cbwr=COMPATIBLE --axis threads=2");
  EXPECT_EQ(cell.pin_cost.rfind("2.00x slower here (median 2.00 ms vs 1.00 ms as is", 0), 0u) << cell.pin_cost;
  std::ostringstream out;
  print_explanation(explanation, out);
  for (const auto* expected :
       {"inputs: equal", "kernels: MKL code path AVX-512 (DL Boost) -> AVX2", "to pin MKL: MKL_CBWR=COMPATIBLE",
        "on the other host: repro-audit run --probe sum/f32", "pinning costs: 2.00x slower here", "search: "})
    EXPECT_NE(out.str().find(expected), std::string::npos) << expected << "\n" << out.str();
}

TEST(Explain, OtherInputsAreNamedBeforeAnyKernel) {
  const auto [before, after] = cross_vendor("sum/f32@cpu", std::string(32, '1'), std::string(32, '2'));
  FakeMachine machine{[](const Cell&) { return std::string("amd-bits"); }};
  const auto explanation = explain(before, after, testing::test_catalogue(), std::ref(machine), options_here());
  EXPECT_EQ(explanation.cells.at(0).inputs, "different (input digest 111111111111 -> 222222222222)");
  auto older = before;
  older.input_scheme = InputScheme::aten;
  older.cells[0].input_digest.clear();
  auto newer = after;
  newer.input_scheme = InputScheme::portable;
  const auto schemes = explain(older, newer, testing::test_catalogue(), std::ref(machine), options_here());
  EXPECT_EQ(schemes.cells.at(0).inputs, "different: input scheme 1 (ATen's generator) vs 2 (portable)");
  EXPECT_NE(schemes.comparison.platform_summary.find("input scheme"), std::string::npos);
  const auto unnamed = explain(snapshot("a", "sum/f32@cpu", "x"), snapshot("b", "sum/f32@cpu", "y"),
                               testing::test_catalogue(), std::ref(machine), options_here());
  // Snapshots that record no scheme were made with ATen's generator, and the explanation says so.
  EXPECT_EQ(unnamed.cells.at(0).inputs,
            "not recorded in either; they came from ATen's generator, whose values differ between some ISA levels");
}

// The same story under several flag sets is one line per variant in every printer but JSON.
TEST(ExplainPrinters, ChangedCellsOfOneVariantAreGroupedWithTheirFlagSets) {
  auto before = snapshot("before", "sum/f32@cpu", "old");
  auto after = snapshot("after", "sum/f32@cpu", "new-2");
  before.cells.push_back(before.cells[0]);
  before.cells[1].key = "sum/f32@cpu|threads=1";
  after.cells.push_back(after.cells[0]);
  after.cells[1].key = "sum/f32@cpu|threads=1";
  after.cells[1].digest = "new-1";
  FakeMachine machine{[](const Cell& cell) { return "new-" + cell.settings.at("threads"); }};
  const auto explanation = explain(before, after, testing::test_catalogue(), std::ref(machine), options_here());
  ASSERT_EQ(explanation.cells.size(), 2u);
  ASSERT_EQ(group_explanations(explanation).size(), 1u);
  std::ostringstream out;
  print_explanation(explanation, out);
  EXPECT_NE(out.str().find("DRIFT sum/f32@cpu (2 flag sets: defaults, threads=1): not explained"), std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("DRIFT sum/f32@cpu|threads=1"), std::string::npos) << out.str();
  EXPECT_NE(render_explanation_markdown(explanation).find("(2 flag sets: defaults, threads=1)"), std::string::npos);
  EXPECT_NE(render_explanation_html(explanation).find("2 flag sets: defaults, threads=1"), std::string::npos);
  EXPECT_EQ(explanation_to_json(explanation).at("cells").size(), 2u);
}

}  // namespace
}  // namespace repro_audit
