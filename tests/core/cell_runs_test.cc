// How many runs a process makes of a cell, and the entries whose runs another config made.
#include "verdict/cell_runs.h"

#include <gtest/gtest.h>

#include "fake_workers.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

using testing::make_cell;

ProcessObservation observed(int warmup, int repeats) {
  ProcessObservation observation;
  for (int i = 0; i < warmup + repeats; ++i) observation.runs.push_back({std::string(32, 'a'), {}, i < warmup});
  return observation;
}

Cell probe_cell(const std::string& probe) {
  auto cell = make_cell(probe + "/f32@cpu");
  cell.probe = probe;
  cell.variant = "f32";
  return cell;
}

const Catalogue kCatalogue = testing::test_catalogue();

TEST(CellRuns, ACellDocumentedAsPossiblyDivergingRunsOnUnlessABudgetSharesTheTime) {
  EXPECT_EQ(quiet_runs_per_process(2), 30);
  EXPECT_EQ(quiet_runs_per_process(7), 9);
  EXPECT_EQ(cell_repeats(probe_cell("sum"), kCatalogue, 4, 30), 4);
  auto racy = probe_cell("index_put_accumulate");  // documented to switch under strict: may diverge by default
  EXPECT_EQ(cell_repeats(racy, kCatalogue, 4, 30), 30);
  EXPECT_EQ(cell_repeats(racy, kCatalogue, 40, 30), 40);
  racy.budget_seconds = 1;
  EXPECT_EQ(cell_repeats(racy, kCatalogue, 4, 30), 4);
  auto invariance = probe_cell("sum");
  invariance.invariance = Invariance::batch;
  EXPECT_EQ(cell_repeats(invariance, kCatalogue, 10, 30), 3);
}

TEST(CellRuns, RunsAnotherConfigMadeAreNamed) {
  const auto sum = probe_cell("sum");
  EXPECT_EQ(runs_problem(sum, kCatalogue, observed(1, 4), 4, 1, 2), "");
  EXPECT_EQ(runs_problem(sum, kCatalogue, observed(1, 4), 1, 1, 2),
            "recorded with 4 runs after the warm-up where this audit's config makes 1");
  EXPECT_EQ(runs_problem(sum, kCatalogue, observed(1, 4), 10, 1, 2),
            "recorded with 4 runs after the warm-up where this audit's config makes 10");
  EXPECT_EQ(runs_problem(sum, kCatalogue, observed(0, 4), 4, 1, 2),
            "recorded with 0 warm-up run(s) where this audit's config makes 1");
  EXPECT_EQ(runs_problem(sum, kCatalogue, observed(2, 4), 4, 1, 2),
            "recorded with 2 warm-up run(s) where this audit's config makes 1");
  // Runs that stopped early, or at the budget, are fewer; those that stopped in the warm-up too.
  auto stopped = observed(1, 1);
  stopped.stopped_early = true;
  EXPECT_EQ(runs_problem(sum, kCatalogue, stopped, 10, 1, 2), "");
  auto in_warmup = observed(2, 0);
  in_warmup.runs.pop_back();
  in_warmup.stopped_early = true;
  EXPECT_EQ(runs_problem(sum, kCatalogue, in_warmup, 10, 3, 2), "");
  auto budget = observed(1, 3);
  budget.budget_limited = true;
  EXPECT_EQ(runs_problem(sum, kCatalogue, budget, 10, 1, 2), "");
  // A failed cell run has no runs to count.
  ProcessObservation failed;
  failed.status = ObservationStatus::crashed;
  EXPECT_EQ(runs_problem(sum, kCatalogue, failed, 10, 1, 2), "");
  // A racy cell ran to the quiet runs, or to the repeats under a budget: either is this config's.
  const auto racy = probe_cell("index_put_accumulate");
  EXPECT_EQ(runs_problem(racy, kCatalogue, observed(1, 30), 4, 1, 2), "");
  EXPECT_EQ(runs_problem(racy, kCatalogue, observed(1, 4), 4, 1, 2), "");
  EXPECT_EQ(runs_problem(racy, kCatalogue, observed(1, 31), 4, 1, 2),
            "recorded with 31 runs after the warm-up where this audit's config makes at most 30");
  EXPECT_EQ(runs_problem(racy, kCatalogue, observed(1, 3), 4, 1, 2),
            "recorded with 3 runs after the warm-up where this audit's config makes at least 4");
}

TEST(CellRuns, AModelsRunsWithoutPerOpRecordsAreCountedAsItsOwn) {
  auto model = make_cell("model.net/forward@cpu");
  model.probe = "model.net";
  model.variant = "forward";
  model.model = ModelSpec{.name = "net", .path = "/net.pt"};
  EXPECT_EQ(runs_problem(model, kCatalogue, observed(1, 4 + 2), 4, 1, 2), "");  // per-op runs, then plain ones
  EXPECT_EQ(runs_problem(model, kCatalogue, observed(1, 4), 4, 1, 2), "");      // no per-op records were made
  EXPECT_EQ(runs_problem(model, kCatalogue, observed(1, 10), 4, 1, 2),
            "recorded with 10 runs after the warm-up where this audit's config makes at most 6");
}

}  // namespace
}  // namespace repro_audit
