// The torch-free half of model cells: aligning per-op records, naming the origin, the verdict's
// model fields, the models: config key, and the JSON that carries them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "config/config_json.h"
#include "config/model_config.h"
#include "common/user_error.h"
#include "protocol/observation_json.h"
#include "report/json_io.h"
#include "kinds/model_text.h"
#include "test_catalogue.h"
#include "verdict/origin.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

const std::string kA = "0123456789abcdef0123456789abcdef", kB = "fedcba9876543210fedcba9876543210",
                  kC = "00000000000000000000000000000000", kD = "11111111111111111111111111111111";

// One record; `start` orders ops as they began (records are in the order they ended).
OpRecord op(const std::string& name, const std::string& inputs, const std::string& outputs, std::int64_t start,
            const std::string& module = "", int depth = 0) {
  OpRecord record;
  record.name = name;
  record.inputs = inputs;
  record.outputs = outputs;
  record.start = start;
  record.module = module;
  record.depth = depth;
  return record;
}

std::vector<std::string> names(const std::vector<OpRecord>& ops, const std::vector<std::pair<int, int>>& matched,
                               bool first) {
  std::vector<std::string> result;
  for (const auto& [a, b] : matched) result.push_back(ops[first ? a : b].name);
  return result;
}

TEST(AlignOps, IdenticalSequencesAlignOneToOne) {
  const std::vector<OpRecord> ops = {op("a", kA, kA, 0), op("b", kA, kA, 1), op("c", kA, kA, 2)};
  const auto matched = align_ops(ops, ops);
  EXPECT_EQ(matched, (std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {2, 2}}));
}

TEST(AlignOps, AnInsertedOrDroppedOpIsSkippedNotRefused) {
  const std::vector<OpRecord> a = {op("x", kA, kA, 0), op("mm", kA, kA, 1), op("add", kA, kA, 2), op("y", kA, kA, 3)};
  const std::vector<OpRecord> b = {op("x", kA, kA, 0), op("mm", kA, kA, 1), op("copy_", kA, kA, 2),
                                   op("add", kA, kA, 3), op("y", kA, kA, 4)};
  const auto matched = align_ops(a, b);
  EXPECT_EQ(names(a, matched, true), (std::vector<std::string>{"x", "mm", "add", "y"}));
  EXPECT_EQ(matched[2], (std::pair<int, int>{2, 3}));
  // The longest common subsequence, not a greedy walk: the middle differs in order.
  const std::vector<OpRecord> c = {op("p", kA, kA, 0), op("q", kA, kA, 1), op("r", kA, kA, 2), op("s", kA, kA, 3)};
  const std::vector<OpRecord> d = {op("p", kA, kA, 0), op("r", kA, kA, 1), op("q", kA, kA, 2), op("r", kA, kA, 3),
                                   op("s", kA, kA, 4)};
  EXPECT_EQ(align_ops(c, d).size(), 4u);
}

TEST(AlignOps, PastItsTableBudgetItPairsByPositionWhileNamesAgree) {
  const std::vector<OpRecord> a = {op("x", kA, kA, 0), op("m", kA, kA, 1), op("n", kA, kA, 2), op("z", kA, kA, 3)};
  const std::vector<OpRecord> b = {op("x", kA, kA, 0), op("m", kA, kA, 1), op("k", kA, kA, 2), op("z", kA, kA, 3)};
  const auto matched = align_ops(a, b, /*max_cells=*/1);
  EXPECT_EQ(names(a, matched, true), (std::vector<std::string>{"x", "m", "z"}));
}

// fc (agrees) -> index_put_ { _index_put_impl_ } (inputs agree, outputs differ) -> head (differs).
std::vector<OpRecord> scatter_run(const std::string& scatter_output) {
  return {op("aten::linear", kA, kA, 0, "fc"), op("aten::_index_put_impl_", kA, scatter_output, 2, "update", 1),
          op("aten::index_put_", kA, scatter_output, 1, "update"),
          op("aten::linear", scatter_output, scatter_output == kB ? kC : kD, 3, "head")};
}

TEST(Origin, TheFirstOpWithAgreeingInputsAndDifferingOutputsInsideWhatEnclosesIt) {
  const auto comparison = compare_op_sequences(scatter_run(kB), scatter_run(kC));
  ASSERT_TRUE(comparison.origin);
  const auto& origin = *comparison.origin;
  EXPECT_EQ(origin.op, "aten::_index_put_impl_");
  EXPECT_EQ(origin.within, std::vector<std::string>{"aten::index_put_"});
  EXPECT_EQ(origin.module, "update");
  EXPECT_EQ(origin.position, 1);
  // The enclosing index_put_ is part of the origin, not downstream; the head is.
  EXPECT_EQ(origin.downstream, 1);
  EXPECT_EQ(origin.downstream_ops, std::vector<std::string>{"#3 aten::linear (head)"});
  EXPECT_TRUE(comparison.parted.empty());
  EXPECT_EQ(describe_origin_op(origin), "#1 aten::index_put_ > aten::_index_put_impl_ (update)");
}

TEST(Origin, SequencesThatPartAreStillComparedAndTheReportSaysWhere) {
  auto a = scatter_run(kB);
  auto b = scatter_run(kC);
  b.insert(b.begin() + 1, op("aten::contiguous", kA, kA, 9, "update"));
  const auto comparison = compare_op_sequences(a, b);
  ASSERT_TRUE(comparison.origin);
  EXPECT_EQ(comparison.origin->op, "aten::_index_put_impl_");
  EXPECT_NE(comparison.parted.find("part at #1"), std::string::npos) << comparison.parted;
  EXPECT_NE(comparison.parted.find("aten::contiguous"), std::string::npos) << comparison.parted;
}

TEST(Origin, NoOpWithAgreeingInputsSaysWhereTheFirstDifferenceIs) {
  // The first op already sees other inputs: the divergence starts outside the recorded ops.
  const std::vector<OpRecord> a = {op("aten::mm", kA, kB, 0, "fc")}, b = {op("aten::mm", kC, kD, 0, "fc")};
  const auto comparison = compare_op_sequences(a, b);
  EXPECT_FALSE(comparison.origin);
  EXPECT_NE(comparison.no_origin.find("inputs of #0 aten::mm (fc)"), std::string::npos) << comparison.no_origin;
}

TEST(Origin, UninitialisedOutputsAreNeverAnOrigin) {
  // aten::empty's outputs are recorded undigested (""): differing garbage is no divergence.
  const std::vector<OpRecord> a = {op("aten::empty", kA, "", 0), op("aten::add", kA, kB, 1)};
  const std::vector<OpRecord> b = {op("aten::empty", kA, "", 0), op("aten::add", kA, kC, 1)};
  const auto comparison = compare_op_sequences(a, b);
  ASSERT_TRUE(comparison.origin);
  EXPECT_EQ(comparison.origin->op, "aten::add");
}

// A model cell's process: runs with the given output digests and op sequences.
Cell model_cell(int steps = 0) {
  Cell cell;
  cell.probe = "model.net";
  cell.variant = steps > 0 ? "train.sgd2" : "forward";
  cell.device = "cpu";
  cell.key = cell.probe + "/" + cell.variant + "@cpu";
  ModelSpec model;
  model.name = "net";
  model.path = "/models/net.pt";
  model.train = steps > 0;
  model.steps = steps;
  cell.model = model;
  return cell;
}

RunObservation run_of(std::vector<std::pair<std::string, std::string>> outputs, const std::string& op_digest) {
  RunObservation run;
  run.outputs = std::move(outputs);
  run.digest = run.outputs.front().second;
  run.op_digest = op_digest;
  run.per_op = true;
  run.time_ns = 10;
  return run;
}

TEST(ModelVerdict, NamesTheDivergedOutputsTheOriginAndItsMeasuredDifference) {
  ProcessObservation process;
  process.runs = {run_of({{"output", kA}, {"grad.fc.weight", kA}, {"grad.head.weight", kA}}, kA),
                  run_of({{"output", kB}, {"grad.fc.weight", kA}, {"grad.head.weight", kC}}, kB)};
  process.op_sequences = {{kA, scatter_run(kB), false}, {kB, scatter_run(kC), false}};
  process.origin_difference = Divergence{"#1 aten::_index_put_impl_", 1, 3, 1024, 1e-5, 4};
  const auto verdict = judge(model_cell(), {process});
  ASSERT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.diverged_outputs, (std::vector<std::string>{"output", "grad.head.weight"}));
  ASSERT_TRUE(verdict.origin);
  EXPECT_EQ(verdict.origin->compared, "process 0 run 0 vs process 0 run 1");
  ASSERT_TRUE(verdict.origin->difference);
  EXPECT_EQ(verdict.origin->difference->max_ulp_difference, 4);
  const auto lines = model_details(verdict);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "diverged outputs (2): output, grad.head.weight");
  EXPECT_NE(lines[1].find("origin of divergence: #1 aten::index_put_ > aten::_index_put_impl_ (update)"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("max ULP 4"), std::string::npos) << lines[1];
}

TEST(ModelVerdict, TheEarliestOriginOverEveryDistinctSequenceAndProcess) {
  // Process 1 parts from process 0 earlier than process 0's own runs do.
  auto late = scatter_run(kB);
  late[3].outputs = kD;  // only the head differs in process 0's second run
  auto early = scatter_run(kC);
  ProcessObservation first, second;
  first.runs = {run_of({{"output", kA}}, kA), run_of({{"output", kB}}, kB)};
  first.op_sequences = {{kA, scatter_run(kB), false}, {kB, late, false}};
  second.process = 1;
  second.runs = {run_of({{"output", kC}}, kC)};
  second.op_sequences = {{kC, early, false}};
  const auto verdict = judge(model_cell(), {first, second});
  ASSERT_TRUE(verdict.origin);
  EXPECT_EQ(verdict.origin->op, "aten::_index_put_impl_");
  EXPECT_EQ(verdict.origin->compared, "process 0 run 0 vs process 1 run 0");
  EXPECT_FALSE(verdict.origin->difference);  // across processes: digests only
}

TEST(ModelVerdict, WithoutPerOpRecordsItSaysWhyNoOriginIsNamed) {
  ProcessObservation process;
  process.runs = {run_of({{"output", kA}}, ""), run_of({{"output", kB}}, "")};
  process.per_op_unavailable = "an AOTInductor package runs compiled kernels";
  auto verdict = judge(model_cell(), {process});
  EXPECT_FALSE(verdict.origin);
  EXPECT_EQ(verdict.origin_note, "per-op records: an AOTInductor package runs compiled kernels");
  process.per_op_unavailable.clear();
  verdict = judge(model_cell(), {process});
  EXPECT_EQ(verdict.origin_note, "per-op records were off (--per-op off)");
}

TEST(ModelVerdict, WhenOnlyRunsWithoutRecordsDivergedTheNoteSaysSoNotThatRecordsMissedIt) {
  // The race missed the recorded runs (one op sequence, one output) and hit a run without records.
  ProcessObservation process;
  auto plain = run_of({{"output", kB}}, "");
  plain.per_op = false;
  process.runs = {run_of({{"output", kA}}, kA), run_of({{"output", kA}}, kA), run_of({{"output", kA}}, kA), plain};
  process.op_sequences = {{kA, scatter_run(kB), false}};
  auto verdict = judge(model_cell(), {process});
  ASSERT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.diverged_outputs, std::vector<std::string>{"output"});
  EXPECT_FALSE(verdict.origin);
  EXPECT_NE(verdict.origin_note.find("the 3 run(s) that recorded every op agreed"), std::string::npos)
      << verdict.origin_note;
  EXPECT_NE(verdict.origin_note.find("only runs without per-op records diverged"), std::string::npos)
      << verdict.origin_note;
  const auto lines = model_details(verdict);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "no origin named: " + verdict.origin_note), lines.end());
  // Recorded runs whose outputs differ with the same ops and digests: that, and not a missed race.
  process.runs[1] = run_of({{"output", kC}}, kA);
  verdict = judge(model_cell(), {process});
  EXPECT_EQ(verdict.origin_note, "every run recorded the same 4 ops with the same digests, yet the outputs differ");
}

TEST(ModelVerdict, StepGrowthFromTheLargestMeasuredDifferencePerStep) {
  ProcessObservation process;
  process.runs = {
      run_of({{"output", kA}, {"loss", kA}, {"params.step1", kA}, {"loss.step2", kA}, {"params.step2", kA}}, ""),
      run_of({{"output", kB}, {"loss", kB}, {"params.step1", kB}, {"loss.step2", kA}, {"params.step2", kB}}, "")};
  process.output_differences = {
      {"loss", 1, 1, 1, 1e-6, 2}, {"params.step1", 1, 5, 100, 1e-7, 1}, {"params.step2", 1, 50, 100, 1e-3, 9}};
  const auto verdict = judge(model_cell(2), {process});
  ASSERT_EQ(verdict.steps.size(), 2u);
  EXPECT_EQ(verdict.steps[0].loss_difference, 1e-6);
  EXPECT_EQ(verdict.steps[0].parameter_difference, 1e-7);
  EXPECT_EQ(verdict.steps[1].loss_difference, 0);  // loss.step2 agreed
  EXPECT_EQ(verdict.steps[1].parameter_difference, 1e-3);
}

TEST(ModelVerdict, PerOpRunsAreTimedApartAndTheirCostIsPrinted) {
  ProcessObservation process;
  auto plain = run_of({{"output", kA}}, "");
  plain.per_op = false;
  plain.time_ns = 100;
  auto recorded = run_of({{"output", kA}}, kA);
  recorded.time_ns = 250;
  process.runs = {recorded, recorded, plain, plain};
  const auto verdict = judge(model_cell(), {process});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  EXPECT_EQ(verdict.timing.median_ns, 100);
  EXPECT_EQ(verdict.per_op_timing.median_ns, 250);
  const auto lines = model_details(verdict);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("2.50x"), std::string::npos) << lines[0];
}

TEST(ModelVerdict, AModelCellContradictsNothingPyTorchDocuments) {
  Verdict verdict;
  verdict.kind = VerdictKind::nondeterministic;
  EXPECT_FALSE(find_contradiction(Documented::unknown, {}, verdict));
  verdict.kind = VerdictKind::error;  // a broken audit still is one
  EXPECT_TRUE(find_contradiction(Documented::unknown, {}, verdict));
}

TEST(ModelReport, OriginAndStepsSurviveTheReportJson) {
  CellReport cell;
  cell.cell = model_cell(2);
  cell.verdict.kind = VerdictKind::nondeterministic;
  cell.verdict.runs = 2;
  cell.verdict.diverged_outputs = {"output", "loss"};
  Origin origin;
  origin.position = 7;
  origin.ops = 20;
  origin.op = "aten::_index_put_impl_";
  origin.within = {"aten::index_put_"};
  origin.module = "update";
  origin.downstream = 3;
  origin.downstream_ops = {"#9 aten::addmm (head)"};
  origin.difference = Divergence{"#7 aten::_index_put_impl_", 1, 3, 1024, 1e-5, 4};
  origin.kernels = {"onednn:gemm"};
  cell.verdict.origin = origin;
  cell.verdict.origin_note = "the op sequences part at #12";
  cell.verdict.steps = {{1, 1e-6, -1}, {2, 0, 1e-3}};
  cell.verdict.per_op_timing = {250, 240, 260, 2};
  ProcessObservation observation;
  observation.runs = {run_of({{"output", kA}}, kB)};
  observation.op_sequences = {{kB, scatter_run(kC), false}};
  observation.output_differences = {{"loss", 1, 1, 1, 1e-6, 2}};
  cell.observations = {observation};
  Report report;
  report.cells = {cell};
  const auto loaded = report_from_json(report_to_json(report), "report.json");
  const auto& v = loaded.cells.at(0).verdict;
  EXPECT_EQ(v.diverged_outputs, cell.verdict.diverged_outputs);
  ASSERT_TRUE(v.origin);
  EXPECT_EQ(v.origin->within, origin.within);
  EXPECT_EQ(v.origin->module, "update");
  EXPECT_EQ(v.origin->difference->max_ulp_difference, 4);
  EXPECT_EQ(v.origin->kernels, origin.kernels);
  EXPECT_EQ(v.origin_note, cell.verdict.origin_note);
  ASSERT_EQ(v.steps.size(), 2u);
  EXPECT_EQ(v.steps[0].parameter_difference, -1);
  EXPECT_EQ(v.per_op_timing.median_ns, 250);
  const auto& cell_loaded = loaded.cells.at(0).cell;
  ASSERT_TRUE(cell_loaded.model);
  EXPECT_EQ(cell_loaded.model->steps, 2);
  const auto& process = loaded.cells.at(0).observations.at(0);
  ASSERT_EQ(process.op_sequences.size(), 1u);
  EXPECT_EQ(process.op_sequences[0].ops[1].module, "update");
  EXPECT_EQ(process.op_sequences[0].ops[1].depth, 1);
  EXPECT_EQ(process.runs[0].op_digest, kB);
  EXPECT_TRUE(process.runs[0].per_op);
  EXPECT_EQ(process.output_differences.at(0).output, "loss");
}

}  // namespace
}  // namespace repro_audit
