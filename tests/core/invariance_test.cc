// Invariance probes in the torch-free core: the verdict, the level beside the ladder, compare, and
// the suite an audit runs.
#include <gtest/gtest.h>

#include "compare/compare.h"
#include "config/config.h"
#include "common/user_error.h"
#include "plan/plan.h"
#include "report/portability.h"
#include "report/report.h"
#include "test_catalogue.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

Cell batch_cell(const std::string& label = "default threads=1") {
  Cell cell;
  cell.key = "batch.mm/f32@cpu|threads=1";
  cell.probe = "batch.mm";
  cell.variant = "f32";
  cell.device = "cpu";
  cell.label = label;
  cell.settings = {{"deterministic_algorithms", "off"}, {"threads", "1"}, {"seed", "0"}};
  cell.invariance = Invariance::batch;
  return cell;
}

// Runs whose outputs are {name, digest} pairs, the reference first; `repeats` identical runs.
ProcessObservation process(int index, const std::vector<std::pair<std::string, std::string>>& outputs,
                           int repeats = 3) {
  ProcessObservation observation;
  observation.process = index;
  std::string digest;
  for (const auto& output : outputs) digest += output.second;
  for (int i = 0; i < repeats; ++i) observation.runs.push_back({digest, outputs, i == 0, 100, ""});
  return observation;
}

TEST(InvarianceVerdict, EveryPerturbationEqualToTheReferenceIsInvariant) {
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"reference", "r"}, {"batch=2@first", "r"}, {"batch=2@last", "r"}};
  const auto verdict = judge(batch_cell(), {process(0, outputs), process(1, outputs)});
  EXPECT_EQ(verdict.kind, VerdictKind::invariant);
  EXPECT_TRUE(verdict.variations.empty());
  EXPECT_TRUE(verdict.digests_agree);
  EXPECT_FALSE(verdict.digest.empty());
  EXPECT_FALSE(is_failing(verdict));
  EXPECT_EQ(verdict.message, "all 2 perturbed results equal the reference bit for bit");
}

TEST(InvarianceVerdict, APerturbationThatDiffersVariesNamingItWithTheWorkersMeasure) {
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"reference", "r"}, {"batch=3@first", "r"}, {"batch=7@first", "x"}, {"batch=7@last", "y"}};
  auto first = process(0, outputs);
  first.variations = {Divergence{"batch=7@first", 0, 5, 1024, 1e-6, 8},
                      Divergence{"batch=7@last", 0, 2, 1024, 2e-6, 30}};
  const auto verdict = judge(batch_cell(), {first, process(1, outputs)});
  EXPECT_EQ(verdict.kind, VerdictKind::varies);
  ASSERT_EQ(verdict.variations.size(), 2u);
  EXPECT_EQ(verdict.variations[0].output, "batch=7@first");
  EXPECT_EQ(verdict.variations[0].differing_elements, 5);
  EXPECT_EQ(verdict.variations[1].max_ulp_difference, 30);
  EXPECT_TRUE(is_failing(verdict));
  EXPECT_EQ(verdict.message,
            "2 of 3 perturbed results differ from the reference; first batch=7@first, max ULP difference 30 "
            "(batch=7@last)");
  // Varying is not a broken determinism promise: runs agree.
  EXPECT_FALSE(find_contradiction(Documented::deterministic, batch_cell().settings, verdict));
}

TEST(InvarianceVerdict, RunsThatDisagreeAreNondeterministicBeforeAnyInvariance) {
  auto first = process(0, {{"reference", "r"}, {"batch=2@first", "r"}});
  first.runs[2].digest = "other";
  first.runs[2].outputs[0].second = "other";
  const auto verdict = judge(batch_cell(), {first});
  EXPECT_EQ(verdict.kind, VerdictKind::nondeterministic);
}

TEST(InvarianceVerdict, AProbeWithNothingToCompareIsAnError) {
  const auto verdict = judge(batch_cell(), {process(0, {{"reference", "r"}})});
  EXPECT_EQ(verdict.kind, VerdictKind::error);
  EXPECT_NE(verdict.message.find("no perturbed result"), std::string::npos);
}

TEST(InvarianceVerdict, TheSameOutputsOfARepeatProbeStayDeterministic) {
  auto cell = batch_cell();
  cell.invariance = Invariance::none;
  const auto verdict = judge(cell, {process(0, {{"output", "a"}, {"grad", "b"}})});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
}

CellReport cell_report(const std::string& label, const std::string& threads, VerdictKind kind) {
  CellReport report;
  report.cell = batch_cell(label);
  report.cell.settings["threads"] = threads;
  report.cell.key = "batch.mm/f32@cpu|threads=" + threads;
  report.verdict.kind = kind;
  report.verdict.digest = "d";
  report.verdict.digests_agree = true;
  report.verdict.processes = 2;
  if (kind == VerdictKind::varies) report.verdict.variations = {Divergence{"batch=7@first", 0, 1, 8, 1, 1}};
  return report;
}

TEST(InvariancePortability, EveryCellInvariantEarnsTheLevelAndOneThatVariesSaysWhere) {
  const auto held = find_portability({cell_report("default threads=1", "1", VerdictKind::invariant),
                                      cell_report("default threads=2", "2", VerdictKind::invariant)});
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].invariance, "batch-invariant");
  EXPECT_EQ(level_text(held[0]), "thread-count-invariant, batch-invariant");

  const auto broke = find_portability({cell_report("default threads=1", "1", VerdictKind::invariant),
                                       cell_report("default threads=2", "2", VerdictKind::varies)});
  ASSERT_EQ(broke.size(), 1u);
  EXPECT_EQ(broke[0].invariance, "");
  EXPECT_EQ(level_text(broke[0]), "thread-count-invariant");
  EXPECT_NE(broke[0].limit.find("varies with batch=7@first under default threads=2"), std::string::npos)
      << broke[0].limit;
}

SnapshotCell snapshot(VerdictKind kind, const std::string& digest) {
  return {"batch.mm/f32@cpu", kind, digest, "", false, {}, ""};
}

std::vector<Change> changes(const SnapshotCell& before, const SnapshotCell& after) {
  Snapshot a, b;
  a.cells = {before};
  b.cells = {after};
  return compare_snapshots(a, b).cells.at(0).changes;
}

TEST(InvarianceCompare, LosingInvarianceIsNewNondeterminismAndRegainingItIsFixed) {
  EXPECT_EQ(changes(snapshot(VerdictKind::invariant, "a"), snapshot(VerdictKind::varies, "b")),
            std::vector<Change>{Change::new_nondeterminism});
  EXPECT_EQ(changes(snapshot(VerdictKind::varies, "b"), snapshot(VerdictKind::invariant, "a")),
            std::vector<Change>{Change::fixed});
  EXPECT_EQ(changes(snapshot(VerdictKind::varies, "b"), snapshot(VerdictKind::varies, "b")),
            std::vector<Change>{Change::same});
  EXPECT_EQ(changes(snapshot(VerdictKind::varies, "b"), snapshot(VerdictKind::varies, "c")),
            std::vector<Change>{Change::drift});
  EXPECT_EQ(changes(snapshot(VerdictKind::invariant, "a"), snapshot(VerdictKind::invariant, "c")),
            std::vector<Change>{Change::drift});
}

Catalogue catalogue_with_invariance() {
  auto catalogue = testing::test_catalogue();
  ProbeInfo probe{"batch.mm", "", {{"f32", "", {"cpu", "cuda"}, ""}}, {}};
  probe.invariance = Invariance::batch;
  catalogue.push_back(probe);
  return catalogue;
}

std::set<std::string> planned_probes(ProbeKind kind) {
  Config config;
  config.kind = kind;
  std::set<std::string> probes;
  for (const auto& cell : make_plan(config, catalogue_with_invariance(), "cpu").cells) probes.insert(cell.probe);
  return probes;
}

TEST(InvarianceSuite, TheKindPicksTheSuite) {
  EXPECT_EQ(planned_probes(ProbeKind::repeat), (std::set<std::string>{"index_put_accumulate", "sum", "ctc_loss"}));
  EXPECT_EQ(planned_probes(ProbeKind::invariance), (std::set<std::string>{"batch.mm"}));
  EXPECT_EQ(planned_probes(ProbeKind::all),
            (std::set<std::string>{"index_put_accumulate", "sum", "ctc_loss", "batch.mm"}));
  const auto plan = make_plan(Config{.kind = ProbeKind::invariance}, catalogue_with_invariance(), "cpu");
  ASSERT_FALSE(plan.cells.empty());
  EXPECT_EQ(plan.cells.front().invariance, Invariance::batch);
}

TEST(InvarianceSuite, TheConfigNamesItsKindOrTheValidChoices) {
  EXPECT_EQ(parse_config("kind: invariance\n", "a.yaml", catalogue_with_invariance()).kind, ProbeKind::invariance);
  EXPECT_EQ(parse_config("", "a.yaml", catalogue_with_invariance()).kind, ProbeKind::repeat);
  try {
    parse_config("repeats: 3\nkind: batch\n", "a.yaml", catalogue_with_invariance());
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), "a.yaml:2:7: kind must be one of: repeat, invariance, collective, all");
  }
}

}  // namespace
}  // namespace repro_audit
