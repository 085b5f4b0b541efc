// `repro-audit model`: fixture models built in C++, run in this process (worker and verdict) and
// through the real binary (exit codes, reports, bad input).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include "../cli/cli_tools.h"
#include "apply/settings_apply.h"
#include "fixture_cache.h"
#include "model_fixtures.h"
#include "models/model_runner.h"
#include "test_paths.h"
#include "python_modules.h"
#include "test_tools.h"
#include "verdict/verdict.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;
using testing::make_cell;

class Models : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = fs::temp_directory_path() / ("repro-audit-models-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
    testing::save_mlp(path("mlp.pt"));
    testing::save_scatter_model(path("scatter.pt"));
    testing::save_throwing_model(path("refuses.pt"));
  }
  static void TearDownTestSuite() { fs::remove_all(folder_); }
  static std::string path(const std::string& name) { return (folder_ / name).string(); }

  static ModelSpec spec(const std::string& file, const std::string& input) {
    ModelSpec model;
    model.name = fs::path(file).stem().string();
    model.path = path(file);
    std::string error;
    model.inputs.push_back(*parse_model_input(input, 0, error));
    return model;
  }

  // The cell judged from one process of `repeats` runs after a warm-up, in this process.
  static Verdict judge_model_cell(const ModelSpec& model, const FlagSet& overrides, int repeats) {
    auto cell = make_cell(model_probe_name(model), model_variant(model), overrides);
    cell.model = model;
    apply_process_settings(process_settings(cell.settings));
    WorkerRequest request;
    request.repeats = repeats;
    request.warmup = 1;
    const auto observation = testing::run_untraced(cell, request);
    EXPECT_EQ(observation.status, ObservationStatus::ok) << observation.message;
    return judge(cell, {observation});
  }

  // The scatter race needs both threads to run at once; on a machine busy with other tests they may
  // not, so a cell is run again (at most 3 times) while its runs all agreed or the race missed every run
  // that recorded per-op digests (no origin to name: it hit only the runs after them).
  static Verdict judge_racing_cell(const ModelSpec& model, const FlagSet& overrides, int repeats) {
    Verdict verdict;
    for (int attempt = 0; attempt < 3; ++attempt) {
      verdict = judge_model_cell(model, overrides, repeats);
      if (verdict.kind != VerdictKind::deterministic && verdict.origin) break;
    }
    return verdict;
  }

  static inline fs::path folder_;
};

TEST_F(Models, ADeterministicMlpAgreesAndRecordsItsOpsWithModulePaths) {
  auto model = spec("mlp.pt", "x:f32[4,8]");
  auto cell = make_cell("model.mlp", "forward", {{"threads", "2"}});
  cell.model = model;
  WorkerRequest request;
  request.repeats = 3;
  const auto observation = testing::run_untraced(cell, request);
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  const auto verdict = judge(cell, {observation});
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic);
  // Every run (warm-up included) digested the same ops: one sequence, with each linear in its module.
  ASSERT_EQ(observation.op_sequences.size(), 1u);
  const auto& ops = observation.op_sequences.front().ops;
  const auto in = [&](const std::string& name, const std::string& module) {
    return std::any_of(ops.begin(), ops.end(),
                       [&](const OpRecord& op) { return op.name.rfind(name, 0) == 0 && op.module == module; });
  };
  EXPECT_TRUE(in("aten::linear", "fc1"));
  EXPECT_TRUE(in("aten::linear", "fc2"));
  EXPECT_TRUE(in("aten::relu", ""));
  int recorded = 0;
  for (const auto& run : observation.runs)
    if (run.per_op) {
      EXPECT_EQ(run.op_digest, observation.op_sequences.front().digest);
      ++recorded;
    }
  EXPECT_EQ(recorded, 4);  // the warm-up and the 3 repeats; the runs after them are timed without
  // Runs with per-op digests and runs without, timed apart.
  EXPECT_GT(verdict.per_op_timing.samples, 0);
  EXPECT_GT(verdict.timing.samples, 0);
}

TEST_F(Models, TheOriginIsTheScatterUpdateAndTheLaterOpsAreDownstream) {
  const auto verdict = judge_racing_cell(spec("scatter.pt", "x:f32[1024,64]"), {{"threads", "2"}}, 6);
  ASSERT_EQ(verdict.kind, VerdictKind::nondeterministic);
  EXPECT_EQ(verdict.diverged_outputs, std::vector<std::string>{"output"});
  ASSERT_TRUE(verdict.origin) << verdict.origin_note;
  const auto& origin = *verdict.origin;
  auto chain = origin.within;
  chain.push_back(origin.op);
  EXPECT_TRUE(std::any_of(chain.begin(), chain.end(), [](const std::string& op) {
    return op.rfind("aten::index_put_", 0) == 0;
  })) << describe_origin_op(origin);
  EXPECT_EQ(origin.module, "update");
  // The two layers before it agreed; the head after it diverged.
  EXPECT_GT(origin.downstream, 0);
  EXPECT_TRUE(std::any_of(origin.downstream_ops.begin(), origin.downstream_ops.end(),
                          [](const std::string& op) { return op.find("(head)") != std::string::npos; }));
  EXPECT_TRUE(std::none_of(origin.downstream_ops.begin(), origin.downstream_ops.end(), [](const std::string& op) {
    return op.find("(fc1)") != std::string::npos || op.find("(fc2)") != std::string::npos;
  }));
  ASSERT_TRUE(origin.difference);
  EXPECT_GT(origin.difference->differing_elements, 0);
  EXPECT_GE(origin.difference->max_ulp_difference, 1);
}

TEST_F(Models, TheScatterModelIsDeterministicUnderDeterministicAlgorithms) {
  const auto verdict =
      judge_model_cell(spec("scatter.pt", "x:f32[1024,64]"), {{"threads", "2"}, {"deterministic_algorithms", "on"}}, 4);
  EXPECT_EQ(verdict.kind, VerdictKind::deterministic) << verdict.message;
  EXPECT_FALSE(verdict.origin);
}

TEST_F(Models, TrainingNamesTheDivergedGradientsAndHowSgdStepsGrowTheDifference) {
  auto model = spec("scatter.pt", "x:f32[1024,64]");
  model.train = true;
  model.steps = 2;
  // The race must reach the forward pass for the loss to differ; on a busy machine the runs may race
  // in the backward pass only: tried again (at most 6 audits; one nearly always suffices).
  auto verdict = judge_racing_cell(model, {{"threads", "2"}}, 4);
  const auto loss_diverged = [&] {
    const auto& outputs = verdict.diverged_outputs;
    return std::find(outputs.begin(), outputs.end(), "loss") != outputs.end();
  };
  for (int attempt = 1; attempt < 6 && !loss_diverged(); ++attempt)
    verdict = judge_racing_cell(model, {{"threads", "2"}}, 4);
  ASSERT_EQ(verdict.kind, VerdictKind::nondeterministic);
  const auto& diverged = verdict.diverged_outputs;
  EXPECT_TRUE(loss_diverged());
  EXPECT_NE(std::find(diverged.begin(), diverged.end(), "grad.head.weight"), diverged.end());
  // fc1 and fc2 come before the scatter: the backward of a gather is deterministic, so theirs agree.
  EXPECT_EQ(std::find(diverged.begin(), diverged.end(), "grad.fc1.weight"), diverged.end());
  ASSERT_EQ(verdict.steps.size(), 2u);
  EXPECT_GT(verdict.steps[0].parameter_difference, 0);
  EXPECT_GT(verdict.steps[1].parameter_difference, 0);
  ASSERT_TRUE(verdict.origin);
  EXPECT_EQ(verdict.origin->module, "update");
}

// A model that writes its own buffer in every run (a count it adds 1 to) gives the same output in every
// run only if each starts from the buffer as loaded. Putting the state back is no part of a run's time:
// a model whose forward is two small ops but whose 128 MiB buffer is put back before every run is timed
// at a small fraction of one copy of that buffer (before, every run's time held the copy).
TEST_F(Models, EachRunStartsFromTheStateAsLoadedAndPuttingItBackIsNotTimed) {
  torch::jit::Module counting("__torch__.Counting");
  counting.register_buffer("count", torch::zeros({1}));
  counting.register_buffer("ballast", torch::zeros({32 << 20}));
  counting.define(R"(
def forward(self, x):
    self.count.add_(1.0)
    return x * self.count
)");
  counting.save(path("counting.pt"));
  const auto model = spec("counting.pt", "x:f32[4]");
  auto cell = make_cell(model_probe_name(model), model_variant(model), {{"threads", "1"}});
  cell.model = model;
  apply_process_settings(process_settings(cell.settings));
  WorkerRequest request;
  request.repeats = 4;
  request.warmup = 1;
  const auto observation = testing::run_untraced(cell, request);
  ASSERT_EQ(observation.status, ObservationStatus::ok) << observation.message;
  EXPECT_EQ(judge(cell, {observation}).kind, VerdictKind::deterministic);
  std::vector<std::int64_t> times = observation.timing_ns;
  for (const auto& run : observation.runs)
    if (!run.warmup) times.push_back(run.time_ns);
  ASSERT_FALSE(times.empty());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  const auto ballast = torch::zeros({32 << 20});
  auto copy = torch::empty_like(ballast);
  auto fastest_copy = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 3; ++i) {
    const auto began = std::chrono::steady_clock::now();
    copy.copy_(ballast);
    fastest_copy = std::min<std::int64_t>(
        fastest_copy,
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count());
  }
  EXPECT_LT(times[times.size() / 2], fastest_copy / 4)
      << "a run's median " << times[times.size() / 2] << " ns against one copy of the buffer, " << fastest_copy
      << " ns";
}

TEST_F(Models, ModelFilesAreToldApartAndAnythingElseIsNamed) {
  EXPECT_EQ(model_format(path("mlp.pt")), ModelFormat::torchscript);
  std::ofstream(path("notes.txt")) << "not a model\n";
  try {
    model_format(path("notes.txt"));
    FAIL() << "a text file was taken for a model";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("not a PyTorch zip archive"), std::string::npos) << error.what();
  }
}

// --- through the binary -----------------------------------------------------------------------

const std::string kQuick = "--device cpu --profile default --axis threads=1 --repeats 2 --processes 1";

TEST_F(Models, TheCommandAuditsAModelAndItsReportWorksWithShowBaselineCompareAndGate) {
  const auto report = path("mlp-report.json");
  auto result = testing_cli::run("model " + path("mlp.pt") + " --input x:f32[4,8] " + kQuick + " --json " + report);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("model.mlp/forward"), std::string::npos) << result.output;
  const auto json = nlohmann::json::parse(testing_cli::slurp(report));
  ASSERT_EQ(json["cells"].size(), 1u);
  EXPECT_EQ(json["cells"][0]["verdict"], "deterministic");
  EXPECT_EQ(json["cells"][0]["documented"], "unknown");
  EXPECT_EQ(json["cells"][0]["model"]["path"], path("mlp.pt"));
  EXPECT_EQ(json["config"]["models"][0]["name"], "mlp");

  result = testing_cli::run("show " + report);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("model.mlp/forward"), std::string::npos) << result.output;
  const auto baseline = path("mlp-baseline.yaml");
  result = testing_cli::run("baseline " + report + " -o " + baseline);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = testing_cli::run("compare " + baseline + " " + report);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("SAME"), std::string::npos) << result.output;
  result = testing_cli::run("gate --baseline " + baseline + " --report " + report);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  // A journaled model audit resumes from its journal, models and all; `run` points to `model`.
  const auto journal = path("mlp-journal");
  result = testing_cli::run("model " + path("mlp.pt") + " --input x:f32[4,8] " + kQuick + " --journal " + journal);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  result = testing_cli::run("model --resume " + journal);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("resumed: 1 of 1 cell runs"), std::string::npos) << result.output;
  result = testing_cli::run("run --resume " + journal);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("model --resume"), std::string::npos) << result.output;
}

TEST_F(Models, TheTerminalNamesTheOriginAndAFailingModelExitsOne) {
  testing_cli::Result result{-1, ""};
  for (int attempt = 0;
       attempt < 3 && (result.exit_code != 1 || result.output.find("origin of divergence") == std::string::npos);
       ++attempt)  // the race, under load, in a recorded run: see above
    result = testing_cli::run("model " + path("scatter.pt") +
                              " --input x:f32[1024,64] --device cpu --profile default --axis threads=2 --repeats 4 "
                              "--processes 1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("origin of divergence"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("(update)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("per-op digests"), std::string::npos) << result.output;
}

TEST_F(Models, AFileThatIsNoModelIsAClearErrorBeforeAnyWorkerStarts) {
  std::ofstream(path("plain.txt")) << "hello\n";
  auto result = testing_cli::run("model " + path("plain.txt") + " --input x:f32[4,8] " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("not a TorchScript archive"), std::string::npos) << result.output;
  // libtorch's torch::save writes an archive of the TorchScript kind, with no forward.
  torch::save(torch::ones({4, 8}), path("weights.pt"));
  result = testing_cli::run("model " + path("weights.pt") + " --input x:f32[4,8] " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("no forward method"), std::string::npos) << result.output;
  result = testing_cli::run("model " + path("mlp.pt") + " " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("needs inputs"), std::string::npos) << result.output;
  result = testing_cli::run("model " + path("mlp.pt") + " --input x:f33[4] " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("valid dtypes"), std::string::npos) << result.output;
}

TEST_F(Models, InputsThatDoNotFitTheSignatureAreAClearErrorOrAnErrorVerdict) {
  // Two inputs for forward(x): refused before the audit.
  auto result = testing_cli::run("model " + path("mlp.pt") + " --input x:f32[4,8] --input y:f32[4,8] " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("forward(x)"), std::string::npos) << result.output;
  // The right count but the wrong shape: the model's own error, as the cell's verdict.
  const auto report = path("shape-report.json");
  result = testing_cli::run("model " + path("mlp.pt") + " --input x:f32[3,5] " + kQuick + " --json " + report);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const auto json = nlohmann::json::parse(testing_cli::slurp(report));
  EXPECT_EQ(json["cells"][0]["verdict"], "error");
  EXPECT_NE(json["cells"][0]["message"].get<std::string>().find("shape"), std::string::npos) << json["cells"][0];
}

TEST_F(Models, AModelThatThrowsIsAnErrorVerdictNotTheEndOfTheAudit) {
  const auto report = path("refuses-report.json");
  std::ofstream(path("two-models.yaml")) << "models:\n  - path: refuses.pt\n    inputs:\n      - x:f32[4,4]\n"
                                            "  - path: mlp.pt\n    inputs: [\"x:f32[4,8]\"]\n";
  const auto result =
      testing_cli::run("model --config " + path("two-models.yaml") + " " + kQuick + " --json " + report);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const auto json = nlohmann::json::parse(testing_cli::slurp(report));
  ASSERT_EQ(json["cells"].size(), 2u);
  EXPECT_EQ(json["cells"][0]["verdict"], "error");
  EXPECT_NE(json["cells"][0]["message"].get<std::string>().find("cannot be multiplied"), std::string::npos);
  EXPECT_EQ(json["cells"][1]["verdict"], "deterministic");
}

// --- files made by the pinned torch's Python ------------------------------------------------------

std::string python() { return test_paths::kPython; }

bool python_imports_torch() { return test_paths::python_has_modules(python(), "torch"); }

std::string fixture_script() { return std::string(test_paths::kSourceDir) + "/tests/torch/model_fixtures.py"; }

TEST_F(Models, InputsWrittenByPythonLoadWhateverTheirContainer) {
  if (!python_imports_torch()) GTEST_SKIP() << python() << " cannot import torch: no Python-made inputs to load";
  for (const std::string kind : {"tensor", "tuple", "list", "dict"}) {
    const auto inputs = path("inputs-" + kind + ".pt");
    ASSERT_EQ(testing::make_fixture(fixture_script(),
                                    python() + " " + fixture_script() + " inputs " + inputs + " " + kind, inputs),
              0);
    auto model = spec("mlp.pt", "x:f32[4,8]");
    model.inputs.clear();
    model.inputs_file = inputs;
    const auto verdict = judge_model_cell(model, {{"threads", "1"}}, 2);
    EXPECT_EQ(verdict.kind, VerdictKind::deterministic) << kind << ": " << verdict.message;
  }
  // What Python's torch.save wrote is inputs, not a model: named as such.
  auto result = testing_cli::run("model " + path("inputs-tensor.pt") + " --input x:f32[4,8] " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("was written by torch.save"), std::string::npos) << result.output;
  // A file whose tensor does not fit the model: read, then the model's own error as the verdict.
  const auto bad = path("inputs-bad.pt");
  ASSERT_EQ(testing::make_fixture(fixture_script(), python() + " " + fixture_script() + " inputs-bad " + bad, bad), 0);
  result = testing_cli::run("model " + path("mlp.pt") + " --inputs " + bad + " " + kQuick);
  EXPECT_EQ(result.exit_code, 1) << result.output;
}

TEST_F(Models, AnAotInductorPackageRunsForwardUnderTheMatrix) {
  if (!python_imports_torch()) GTEST_SKIP() << python() << " cannot import torch: no package can be compiled here";
  const auto package = path("small.pt2");
  ASSERT_EQ(testing::make_fixture(fixture_script(),
                                  python() + " " + fixture_script() + " aoti " + package + " 2> " + path("aoti.log"),
                                  package),
            0)
      << testing_cli::slurp(path("aoti.log"));
  EXPECT_EQ(model_format(package), ModelFormat::aoti_package);
  const auto report = path("package-report.json");
  auto result = testing_cli::run("model " + package +
                                 " --input x:f32[4,8] --device cpu --profile default --profile strict "
                                 "--axis threads=1,2 --repeats 2 --processes 1 --json " +
                                 report);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const auto json = nlohmann::json::parse(testing_cli::slurp(report));
  ASSERT_EQ(json["cells"].size(), 4u);
  for (const auto& cell : json["cells"]) {
    EXPECT_EQ(cell["verdict"], "deterministic") << cell;
    EXPECT_NE(cell["observations"][0]["per_op_unavailable"].get<std::string>().find("AOTInductor"), std::string::npos);
  }
  // Training a package is refused, as is a wrong input shape (the package checks its inputs).
  result = testing_cli::run("model " + package + " --input x:f32[4,8] --train " + kQuick);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("forward only"), std::string::npos) << result.output;
  result = testing_cli::run("model " + package + " --input x:f32[3,8] " + kQuick);
  EXPECT_EQ(result.exit_code, 1) << result.output;
}

}  // namespace
}  // namespace repro_audit
