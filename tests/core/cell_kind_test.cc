#include <gtest/gtest.h>

#include <set>

#include "compare/baseline.h"
#include "kind/cell_kind.h"
#include "plan/cell_grammar.h"
#include "report/report.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

Cell cell_of(const std::string& probe) {
  Cell cell;
  cell.probe = probe;
  cell.variant = "f32";
  cell.device = "cpu";
  cell.settings = make_flag_set({}, "cpu");
  cell.key = cell_key(cell.probe, cell.variant, cell.device, cell.settings);
  return cell;
}

Cell model_cell(const std::string& name) {
  auto cell = cell_of("model." + name);
  ModelSpec model;
  model.name = name;
  model.path = "m.pt";
  cell.model = model;
  return cell;
}

TEST(CellKinds, EveryCellHasOneKindAndTheNamesAreDistinct) {
  std::set<std::string> names;
  for (const auto* kind : cell_kinds()) EXPECT_TRUE(names.insert(kind->name()).second) << kind->name();
  EXPECT_EQ(names, (std::set<std::string>{"repeat", "invariance", "model", "py", "collective"}));
  EXPECT_STREQ(cell_kinds().back()->name(), "repeat");  // the last takes every cell

  auto invariance = cell_of("batch_rows");
  invariance.invariance = Invariance::batch;
  EXPECT_STREQ(kind_of(cell_of("sum")).name(), "repeat");
  EXPECT_STREQ(kind_of(invariance).name(), "invariance");
  EXPECT_STREQ(kind_of(model_cell("net")).name(), "model");
  auto python = model_cell("step");
  python.model->callable = "train:make";
  EXPECT_STREQ(kind_of(python).name(), "py");
  auto collective = cell_of("all_reduce");
  collective.settings["ranks"] = "3";
  EXPECT_STREQ(kind_of(collective).name(), "collective");
  collective.settings["ranks"] = "1";
  EXPECT_STREQ(kind_of(collective).name(), "repeat");
}

// Two processes that each agree with themselves but not with each other: under torch.compile without a
// shared cache, two compiles; the verdict says so, and says nothing of it for eager code or one cache.
TEST(CellKinds, APyCellsCompileToCompileDivergenceIsSaidToBeTwoCompiles) {
  auto python = model_cell("step");
  python.model->callable = "train:make";
  python.model->per_op = false;
  python.settings["compile"] = "default";
  std::vector<ProcessObservation> observations(2);
  for (int process = 0; process < 2; ++process) {
    observations[process].process = process;
    for (int run = 0; run < 2; ++run) {
      RunObservation observed;
      observed.digest = process == 0 ? "00000000000000000000000000000001" : "00000000000000000000000000000002";
      observed.outputs = {{"output", observed.digest}};
      observations[process].runs.push_back(observed);
    }
  }
  const auto note = [&](const Cell& cell) { return judge(cell, observations).origin_note; };
  EXPECT_EQ(judge(python, observations).divergence_scope, "across-processes");
  EXPECT_NE(note(python).find("each process compiled the callable afresh"), std::string::npos) << note(python);
  auto cached = python;
  cached.model->compile_cache = "/cache";
  EXPECT_EQ(note(cached).find("afresh"), std::string::npos) << note(cached);
  auto eager = python;
  eager.settings["compile"] = "off";
  EXPECT_EQ(note(eager).find("afresh"), std::string::npos) << note(eager);
}

// A py cell's callable is data that `repro` writes into a script: only its grammar passes.
TEST(CellKinds, APyCellsCallableMustBeModuleOrFileThenAName) {
  auto python = model_cell("step");
  for (const std::string good : {"train:make", "pkg.train:Trainer.step", "/home/me/train step.py:make"}) {
    python.model->callable = good;
    EXPECT_EQ(kind_of(python).grammar_problem(python), "") << good;
  }
  for (const std::string bad : {"train", "train:", ":make", "train:make()", "os:system('x')", "a\nb.py:make"}) {
    python.model->callable = bad;
    EXPECT_NE(kind_of(python).grammar_problem(python), "") << bad;
  }
}

TEST(CellKinds, WhatTheWorkerAsksDiffersByKind) {
  auto invariance = cell_of("batch_rows");
  invariance.invariance = Invariance::layout;
  EXPECT_TRUE(kind_of(cell_of("sum")).stops_at_first_difference());
  EXPECT_FALSE(kind_of(invariance).stops_at_first_difference());
  EXPECT_FALSE(kind_of(model_cell("net")).stops_at_first_difference());
  EXPECT_TRUE(kind_of(cell_of("sum")).has_timing_runs());
  EXPECT_FALSE(kind_of(invariance).has_timing_runs());  // its few runs are its timings
  EXPECT_FALSE(kind_of(model_cell("net")).has_timing_runs());
}

TEST(CellKinds, AModelIsDocumentedUnknownAndAProbeAsItsCatalogueSays) {
  ProbeInfo probe;
  probe.name = "sum";
  probe.variants.push_back({.name = "f32", .devices = {"cpu"}});
  probe.documented = {{"cpu", Documented::nondeterministic}};
  EXPECT_EQ(kind_of(cell_of("sum")).documented(cell_of("sum"), &probe), Documented::nondeterministic);
  EXPECT_EQ(kind_of(cell_of("sum")).documented(cell_of("sum"), nullptr), Documented::deterministic);
  EXPECT_EQ(kind_of(model_cell("net")).documented(model_cell("net"), &probe), Documented::unknown);
}

TEST(CellKinds, OnlyAModelNameIsCheckedAsAModelsName) {
  EXPECT_EQ(cell_grammar_problem(model_cell("net-1_a"), true), "");
  EXPECT_NE(cell_grammar_problem(model_cell("bad.name"), false).find("model name"), std::string::npos);
}

TEST(CellKinds, ABaselineKeepsEachModelSpecOnceAndNothingForProbes) {
  Report report;
  for (const auto& cell : {model_cell("net"), model_cell("net"), cell_of("sum")}) {
    CellReport entry;
    entry.cell = cell;
    entry.verdict.kind = VerdictKind::deterministic;
    report.cells.push_back(entry);
  }
  const auto baseline = baseline_from_report(report, "r.json");
  ASSERT_EQ(baseline.models.size(), 1u);
  EXPECT_EQ(baseline.models.front().name, "net");
}

}  // namespace
}  // namespace repro_audit
