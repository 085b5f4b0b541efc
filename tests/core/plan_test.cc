#include "plan/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "test_catalogue.h"

namespace repro_audit {
namespace {

TEST(Plan, DefaultCpuPlanCrossesProfilesWithThreads) {
  const auto plan = make_plan(Config{}, testing::test_catalogue(), "cpu");
  ASSERT_EQ(plan.columns.size(), 6u);
  EXPECT_EQ(plan.columns[0].label, "default threads=1");
  EXPECT_EQ(plan.columns[5].label, "strict-warn threads=2");
  // index_put_accumulate has 2 variants, sum 1, ctc_loss 1 (CUDA only); control.hang is not in the default suite.
  EXPECT_EQ(plan.cells.size(), 4u * 6u);
  std::set<std::string> keys;
  for (const auto& cell : plan.cells) {
    keys.insert(cell.key);
    EXPECT_NE(cell.probe, "control.hang");
  }
  EXPECT_EQ(keys.size(), plan.cells.size());
}

TEST(Plan, SettingsThatDoNotApplyCollapseToNotApplicable) {
  const auto plan = make_plan(Config{}, testing::test_catalogue(), "cpu");
  const auto& cell = plan.cells.front();
  EXPECT_EQ(cell.settings.at("cudnn_benchmark"), "n/a");
  EXPECT_EQ(cell.settings.at("cublas_workspace_config"), "n/a");
  EXPECT_EQ(cell.settings.at("threads"), "1");
  EXPECT_EQ(cell.key, "index_put_accumulate/f32@cpu|threads=1");  // only what differs from the defaults
}

TEST(Plan, ProfilesThatCollapseOnTheDeviceGiveNoDuplicateCells) {
  Config config;
  config.profiles = {"default", "cudnn-pinned", "no-cudnn", "strict"};
  config.axes = {};
  const auto cpu = make_plan(config, testing::test_catalogue(), "cpu");
  ASSERT_EQ(cpu.columns.size(), 2u);  // cudnn-pinned and no-cudnn equal default on the CPU
  EXPECT_EQ(cpu.columns[1].label, "strict");
  const auto cuda = make_plan(config, testing::test_catalogue(), "cuda:0");
  EXPECT_EQ(cuda.columns.size(), 4u);
  EXPECT_EQ(cuda.cells.front().settings.at("threads"), "n/a");
}

TEST(Plan, UnsupportedVariantsKeepTheirReason) {
  const auto plan = make_plan(Config{}, testing::test_catalogue(), "cpu");
  int unsupported = 0;
  for (const auto& cell : plan.cells)
    if (cell.probe == "ctc_loss") {
      EXPECT_EQ(cell.unsupported_reason, "the cuDNN path exists only on CUDA");
      ++unsupported;
    }
  EXPECT_EQ(unsupported, 6);
  for (const auto& batch : make_batches(plan.cells))
    for (const auto& cell : batch.cells) EXPECT_NE(cell.probe, "ctc_loss");
}

TEST(Plan, FullMatrixAndSelections) {
  Config config;
  config.full_matrix = true;
  config.axes = {{"deterministic_algorithms", {"off", "on", "warn"}}, {"threads", {"1", "2"}}};
  config.probes = {{"index_put_accumulate", {"f64"}}, {"control.hang", {}}};
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  EXPECT_EQ(plan.columns.size(), 6u);
  EXPECT_EQ(plan.columns[0].label, "deterministic_algorithms=off threads=1");
  EXPECT_EQ(plan.cells.size(), 12u);
}

// torch.compile and Inductor's switches reach py cells only: a probe keeps its eager columns, a py
// cell gets every compile mode, and no eager cell is repeated for an Inductor switch (deterministic
// mode, autotuning).
TEST(Plan, CompileColumnsHoldPyCellsOnly) {
  Config config;
  config.full_matrix = true;
  config.axes = {{"compile", {"off", "default"}},
                 {"inductor_deterministic", {"off", "on"}},
                 {"autotune", {"off", "on"}},
                 {"threads", {"2"}}};
  config.probes = {{"index_put_accumulate", {"f64"}}};
  EXPECT_EQ(make_plan(config, testing::test_catalogue(), "cpu").cells.size(), 1u);
  ModelSpec step;
  step.name = "step";
  step.callable = "train:make";
  config.models = {step};
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  std::set<std::string> keys;
  for (const auto& cell : plan.cells) keys.insert(cell.key);
  EXPECT_EQ(keys, (std::set<std::string>{"py.step/call@cpu", "py.step/call@cpu|compile=default",
                                         "py.step/call@cpu|compile=default,inductor_deterministic=on",
                                         "py.step/call@cpu|autotune=on,compile=default",
                                         "py.step/call@cpu|autotune=on,compile=default,inductor_deterministic=on"}));
}

TEST(Plan, BatchesGroupByProcessSettings) {
  const auto plan = make_plan(Config{}, testing::test_catalogue(), "cpu");
  const auto batches = make_batches(plan.cells);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].process_settings.at("threads"), "1");
  EXPECT_EQ(batches[1].process_settings.at("threads"), "2");
  EXPECT_EQ(batches[0].cells.size(), 9u);  // 3 variants x 3 profiles
}

}  // namespace
}  // namespace repro_audit

#include "supervisor/supervisor.h"

namespace repro_audit {
namespace {

TEST(WorkerEnvironment, CublasWorkspaceConfigIsSetOrRemovedBeforeTheWorkerStarts) {
  EXPECT_EQ(worker_environment({{"cublas_workspace_config", ":4096:8"}}).at("CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  // An empty value removes a variable the parent may have set.
  EXPECT_EQ(worker_environment({{"cublas_workspace_config", "unset"}}).at("CUBLAS_WORKSPACE_CONFIG"), "");
  EXPECT_EQ(worker_environment({{"threads", "2"}, {"cublas_workspace_config", "n/a"}}).at("CUBLAS_WORKSPACE_CONFIG"),
            "");
}

TEST(WorkerEnvironment, PortabilitySettingsInheritTheUsersVariableUnlessSweptExplicitly) {
  // inherit: the user's ATEN_CPU_CAPABILITY / MKL_CBWR stays as it is (absent from the overrides).
  const auto inherited = worker_environment(make_flag_set({}, "cpu"));
  EXPECT_FALSE(inherited.count("ATEN_CPU_CAPABILITY"));
  EXPECT_FALSE(inherited.count("MKL_CBWR"));
  EXPECT_TRUE(inherits_environment(make_flag_set({}, "cpu")));
  // native removes the variable, so ATen takes the CPU's best level; a level sets it.
  const auto native = worker_environment(make_flag_set({{"cpu_capability", "native"}, {"mkl_cbwr", "unset"}}, "cpu"));
  EXPECT_EQ(native.at("ATEN_CPU_CAPABILITY"), "");
  EXPECT_EQ(native.at("MKL_CBWR"), "");
  const auto pinned = worker_environment(profiles().at("portable"));
  EXPECT_EQ(pinned.at("ATEN_CPU_CAPABILITY"), "default");
  EXPECT_EQ(pinned.at("MKL_CBWR"), "COMPATIBLE");
  EXPECT_FALSE(inherits_environment(make_flag_set({{"cpu_capability", "native"}}, "cpu")));
}

TEST(Plan, PortabilitySettingsAtTheirDefaultLeaveTheKeysAsBefore) {
  Config config;
  config.probes = {{"sum", {"f32"}}};
  config.profiles = {"default", "portable"};
  config.axes = {{"threads", {"2"}}};
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  ASSERT_EQ(plan.cells.size(), 2u);
  EXPECT_EQ(plan.cells[0].key, "sum/f32@cpu");
  EXPECT_EQ(plan.cells[1].key, "sum/f32@cpu|cpu_capability=default,mkl_cbwr=COMPATIBLE");
  // Process settings: the portable profile's cells run in workers of their own.
  EXPECT_EQ(make_batches(plan.cells).size(), 2u);
}

// A variant whose path only CUDA's users take (Python's decomposition) is in CUDA's default suite only;
// elsewhere it runs when its probe is named.
TEST(Plan, AVariantOfAnotherDevicesDefaultSuiteRunsHereOnlyWhenNamed) {
  auto catalogue = testing::test_catalogue();
  VariantInfo decomposed{"decomposed-f32", "", {"cpu", "cuda"}, ""};
  decomposed.default_suite_devices = {"cuda"};
  catalogue[1].variants.push_back(decomposed);  // sum
  const auto variants_of_sum = [&](const Config& config, const std::string& device) {
    std::set<std::string> variants;
    for (const auto& cell : make_plan(config, catalogue, device).cells)
      if (cell.probe == "sum") variants.insert(cell.variant);
    return variants;
  };
  EXPECT_EQ(variants_of_sum(Config{}, "cpu"), std::set<std::string>{"f32"});
  EXPECT_EQ(variants_of_sum(Config{}, "cuda:0"), (std::set<std::string>{"f32", "decomposed-f32"}));
  Config named;
  named.probes = {{"sum", {}}};
  EXPECT_EQ(variants_of_sum(named, "cpu"), (std::set<std::string>{"f32", "decomposed-f32"}));
  named.probes = {{"sum", {"decomposed-f32"}}};
  EXPECT_EQ(variants_of_sum(named, "cpu"), std::set<std::string>{"decomposed-f32"});
  // One in no default suite runs on every device only when named.
  auto& nowhere = catalogue[1].variants.back();
  nowhere.default_suite_nowhere = true;
  EXPECT_EQ(variants_of_sum(Config{}, "cpu"), std::set<std::string>{"f32"});
  EXPECT_EQ(variants_of_sum(Config{}, "cuda:0"), std::set<std::string>{"f32"});
  named.probes = {{"sum", {}}};
  EXPECT_EQ(variants_of_sum(named, "cuda:0"), (std::set<std::string>{"f32", "decomposed-f32"}));
}

// An invariance probe documented deterministic on the device answers the same under strict as without:
// its strict cells are left out where the column without deterministic algorithms is planned.
TEST(Plan, InvarianceProbesDocumentedDeterministicSkipTheStrictColumnsThatRepeatAnother) {
  auto catalogue = testing::test_catalogue();
  ProbeInfo batch{"batch.mm", "", {{"f32", "", {"cpu", "cuda"}, ""}}, {{"cuda", Documented::cublas_workspace}}};
  batch.invariance = Invariance::batch;
  catalogue.push_back(batch);
  const auto labels_of = [&](const Config& config, const std::string& device) {
    std::vector<std::string> labels;
    for (const auto& cell : make_plan(config, catalogue, device).cells)
      if (cell.probe == "batch.mm") labels.push_back(cell.label);
    return labels;
  };
  Config config;
  config.kind = ProbeKind::invariance;
  EXPECT_EQ(labels_of(config, "cpu"), (std::vector<std::string>{"default threads=1", "default threads=2"}));
  // On CUDA strict raises without CUBLAS_WORKSPACE_CONFIG: every column stays.
  EXPECT_EQ(labels_of(config, "cuda:0").size(), 3u);
  // Strict alone: nothing repeats it, so it runs.
  config.profiles = {"strict"};
  EXPECT_EQ(labels_of(config, "cpu"), (std::vector<std::string>{"strict threads=1", "strict threads=2"}));
  // Repeat probes keep every column: what deterministic algorithms do to them is the audit.
  const auto plan = make_plan(Config{}, catalogue, "cpu");
  EXPECT_EQ(std::count_if(plan.cells.begin(), plan.cells.end(), [](const Cell& c) { return c.probe == "sum"; }), 6);
}

}  // namespace
}  // namespace repro_audit
