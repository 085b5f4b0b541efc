// The GPU tier (label gpu): what the runs on real GPUs established, asserted where a GPU is, skipped
// with the reason where none is. Each test runs the real binary on CUDA and reads its JSON report.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/cli_tools.h"
#include "common/pattern.h"
#include "report/json_io.h"
#include "report/same_kernel_costs.h"
#include "timing/timing.h"
#include "trace/tracer.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

// Why there is no GPU to test on; empty when there is one.
std::string no_gpu_reason() {
  static const std::string reason = [] {
    const auto listed = shell("nvidia-smi -L");
    if (listed.exit_code != 0 || listed.output.find("GPU 0") == std::string::npos)
      return std::string("no GPU here (nvidia-smi -L lists none): the gpu tier runs on a GPU machine");
    return std::string();
  }();
  return reason;
}

class Gpu : public CliTest {
 protected:
  void SetUp() override {
    if (const auto reason = no_gpu_reason(); !reason.empty()) GTEST_SKIP() << reason;
    CliTest::SetUp();
  }
  // REPRO_AUDIT_GPU_KEEP_REPORTS=DIR: every report a test wrote is copied there as TEST-NAME.json (a lease's
  // script keeps them as fixtures; the folder must exist).
  void TearDown() override {
    if (const char* keep = std::getenv("REPRO_AUDIT_GPU_KEEP_REPORTS"); keep && *keep && fs::is_directory(folder_)) {
      const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
      for (const auto& entry : fs::directory_iterator(folder_))
        if (entry.path().extension() == ".json") {
          std::error_code ignored;
          fs::copy_file(entry.path(), fs::path(keep) / (test + "-" + entry.path().filename().string()),
                        fs::copy_options::overwrite_existing, ignored);
        }
    }
    CliTest::TearDown();
  }
  json audit(const std::string& arguments, int expected_exit, std::string* output = nullptr) {
    const auto report_path = path("report.json");
    const auto result = run("run --device cuda " + arguments + " --json " + report_path);
    EXPECT_EQ(result.exit_code, expected_exit) << result.output;
    if (output) *output = result.output;
    return json::parse(slurp(report_path));
  }
};

const json& cell_of(const json& report, const std::string& key) {
  for (const auto& cell : report.at("cells"))
    if (cell.at("key") == key) return cell;
  throw std::runtime_error("no cell " + key);
}

const std::string kStrict = "|cublas_workspace_config=:4096:8,cudnn_deterministic=true,deterministic_algorithms=on";

// Every CUDA cell that ran names the kernels it launched (CUPTI), in every process.
void expect_kernels_named(const json& report) {
  for (const auto& cell : report.at("cells")) {
    if (cell.at("verdict") == "raises" || cell.at("verdict") == "unsupported") continue;
    for (const auto& observation : cell.at("observations")) {
      EXPECT_FALSE(observation.contains("trace_unavailable")) << cell.at("key");
      ASSERT_TRUE(observation.contains("kernel_sequences")) << cell.at("key");
      bool named = false;
      for (const auto& sequence : observation.at("kernel_sequences"))
        for (const auto& kernel : sequence.at("kernels")) named = named || !kernel.value("name", "").empty();
      EXPECT_TRUE(named) << cell.at("key");
    }
  }
}

// index_add's atomic kernel diverges by default; strict's sort-based path agrees, at a cost outside the
// noise, timed at one SM clock that the report gives.
TEST_F(Gpu, IndexAddDivergesByDefaultAndStrictAgreesAtAMeasuredCost) {
  const auto report = audit("--probe index_add/f32 --profile default --profile strict", 0);
  const auto& plain = cell_of(report, "index_add/f32@cuda:0");
  const auto& strict = cell_of(report, "index_add/f32@cuda:0" + kStrict);
  EXPECT_EQ(plain.at("verdict"), "nondeterministic");
  EXPECT_EQ(strict.at("verdict"), "deterministic");
  EXPECT_FALSE(plain.contains("cost_ratio")) << "the reference has no cost against itself";
  ASSERT_TRUE(strict.contains("cost_ratio")) << strict.dump();
  EXPECT_GT(strict.at("cost_ratio_interval").at(0).get<double>(), 1.0) << strict.dump();
  EXPECT_GT(strict.at("timing").value("clock_mhz", 0), 0) << strict.at("timing").dump();
  EXPECT_EQ(strict.at("timing").value("clock_mhz", 0), plain.at("timing").value("clock_mhz", -1));
  expect_kernels_named(report);
}

// A documented-racy kernel whose probe could not race before: the shapes now make it race.
TEST_F(Gpu, AdaptiveAvgPoolAndSparseBmmReachTheirRacyPaths) {
  const auto report = audit("--probe pooling/adaptive_avg2d-f32 --probe sparse_bmm/f32 --profile default", 0);
  EXPECT_EQ(cell_of(report, "pooling/adaptive_avg2d-f32@cuda:0").at("verdict"), "nondeterministic");
  EXPECT_EQ(cell_of(report, "sparse_bmm/f32@cuda:0").at("verdict"), "nondeterministic");
}

// The racy control is caught and its ordered twin is not; selftest passes on the GPU, its timing
// control included.
TEST_F(Gpu, SelftestPassesWithTheTimingControl) {
  const auto result = run("selftest --device cuda");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("selftest passed"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("unsupported: the timing control"), std::string::npos) << result.output;
}

// The timer sees the control's 30% and invents no cost where there is none.
TEST_F(Gpu, TheTimingControlsCostIsSeenOnTheGpu) {
  const auto report = audit("--probe control.timed_cost --profile default --profile strict --repeats 10", 0);
  const auto& costly = cell_of(report, "control.timed_cost/cost-1.3x@cuda:0" + kStrict);
  ASSERT_TRUE(costly.contains("cost_ratio")) << costly.dump();
  EXPECT_NEAR(costly.at("cost_ratio").get<double>(), 1.3, 0.1);
  EXPECT_GT(costly.at("cost_ratio_interval").at(0).get<double>(), 1.0);
  const auto& even = cell_of(report, "control.timed_cost/cost-1.0x@cuda:0" + kStrict);
  ASSERT_TRUE(even.contains("cost_ratio")) << even.dump();
  EXPECT_LE(even.at("cost_ratio_interval").at(0).get<double>(), 1.0 + repro_audit::kNegligibleCost);
  EXPECT_GE(even.at("cost_ratio_interval").at(1).get<double>(), 1.0 - repro_audit::kNegligibleCost);
}

// Flag sets that ran the same kernels cost the same: every pair the default CUDA audit holds (found
// from the report, not a fixed list), timed over three rounds in fresh workers, has overlapping
// cost intervals (an H100's later rounds once timed launch-bound runs: sum/f32 0.99x against 0.48x).
// REPRO_AUDIT_GPU_DEFAULT_REPORT names the report of that audit where a script already ran it with this
// binary on this machine (tools/gpu-proof times it once); without it the test runs the audit itself.
TEST_F(Gpu, FlagSetsThatRunTheSameKernelsCostTheSame) {
  auto report_path = path("default.json");
  if (const char* made = std::getenv("REPRO_AUDIT_GPU_DEFAULT_REPORT"); made && *made) {
    report_path = made;
  } else {
    const auto result = run("run --device cuda --json " + report_path);
    ASSERT_NE(result.exit_code, 2) << result.output;
  }
  const auto report = repro_audit::load_report_file(report_path);
  ASSERT_EQ(report.device.rfind("cuda", 0), 0u) << report_path << " is no CUDA audit";
  ASSERT_TRUE(report.config.value("probes", json::array()).empty()) << report_path << " is no default audit";
  const auto pairs = repro_audit::same_kernel_pairs(report);
  EXPECT_GE(pairs.size(), 20u) << "strict and strict-warn share most ops' kernels";
  for (const auto& pair : pairs) {
    std::printf("same-kernel pair %s: %s  %s  against %s  %s\n", pair.agree() ? "agrees" : "DISAGREES",
                pair.first.c_str(), repro_audit::cost_detail(pair.first_cost).c_str(), pair.second.c_str(),
                repro_audit::cost_detail(pair.second_cost).c_str());
    EXPECT_TRUE(pair.agree()) << pair.first << " " << repro_audit::cost_detail(pair.first_cost) << " against "
                              << pair.second << " " << repro_audit::cost_detail(pair.second_cost);
  }
}

// Portable inputs are made on the GPU by its integer kernels (probe/portable_tensor.h): every probe cell of
// the default CUDA audit (REPRO_AUDIT_GPU_DEFAULT_REPORT, else an audit of the probes with the largest
// inputs) has the input digest that `export-inputs` gets from the same draws made on the CPU.
TEST_F(Gpu, PortableInputsMadeOnTheGpuHaveTheBitsTheCpuMakes) {
  auto report_path = path("inputs.json");
  if (const char* made = std::getenv("REPRO_AUDIT_GPU_DEFAULT_REPORT"); made && *made) {
    report_path = made;
  } else {
    const auto result =
        run("run --device cuda --no-cost --repeats 2 --probe rnn --probe histc --probe nll_loss2d"
            " --probe index_write --probe sdpa_backward --profile default --json " +
            report_path);
    ASSERT_NE(result.exit_code, 2) << result.output;
  }
  const auto report = json::parse(slurp(report_path));
  ASSERT_EQ(report.at("config").value("input_scheme", 0), 2) << "a portable audit";
  json cells = json::array(), directories = json::array();
  std::map<std::string, std::string> on_the_gpu;
  for (const auto& cell : report.at("cells")) {
    if (cell.at("probe").get<std::string>().rfind("py.", 0) == 0) continue;
    for (const auto& observation : cell.value("observations", json::array()))
      if (observation.contains("input_digest")) {
        on_the_gpu[cell.at("key")] = observation.at("input_digest");
        json asked = json::object();
        for (const auto* field : {"key", "probe", "variant", "device", "settings", "invariance"})
          if (cell.contains(field)) asked[field] = cell.at(field);
        cells.push_back(asked);
        directories.push_back("");
        break;
      }
  }
  ASSERT_GE(on_the_gpu.size(), 10u);
  std::ofstream(path("request.json")) << json{
      {"request", {{"device", "cpu"}, {"cells", cells}, {"process_settings", json::object()}, {"input_scheme", 2}}},
      {"directories", directories}};
  const auto exported = run("export-inputs < " + path("request.json"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::size_t compared = 0;
  std::istringstream lines(exported.output);
  for (std::string line; std::getline(lines, line);) {
    const auto answer = json::parse(line, nullptr, false);
    if (answer.is_discarded() || !answer.is_object() || !answer.contains("key")) continue;
    const auto key = answer.at("key").get<std::string>();
    EXPECT_FALSE(answer.contains("error")) << answer.dump();
    EXPECT_EQ(answer.value("input_digest", "none"), on_the_gpu.at(key)) << key;
    ++compared;
  }
  std::printf("input digests compared: %zu cells made on the GPU against the CPU\n", compared);
  EXPECT_EQ(compared, on_the_gpu.size()) << exported.output.substr(0, 2000);
}

// The randomness half of the recipe on CUDA: a step drawing from a CUDA generator of its own that the OS
// seeded differs across processes and the cause names that generator; a step drawing from torch's global
// CUDA generator is deterministic (the runner seeds it for each run) and the report lists that source.
TEST_F(Gpu, PyCellsOnCudaNameTheirCudaGenerators) {
  const std::string script = std::string(test_paths::kSourceDir) + "/tests/gpu/py/cuda_randomness.py";
  const auto report_path = path("random.json");
  const auto config = write("random.yaml", "models:\n  - callable: " + script +
                                               ":own_generator\n  - callable: " + script + ":global_generator\n");
  const auto result =
      run("py --config " + config +
          " --device cuda --repeats 2 --processes 2 --no-cost --per-op off --profile default --json " + report_path);
  if (result.output.find("no Python found next to the libtorch") != std::string::npos)
    GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(result.exit_code, 1) << result.output;
  std::printf("%s\n", result.output.c_str());
  const auto report = json::parse(slurp(report_path));
  const json* own = nullptr;
  const json* global = nullptr;
  for (const auto& cell : report.at("cells")) {
    const auto key = cell.at("key").get<std::string>();
    if (key.find("own_generator") != std::string::npos) own = &cell;
    if (key.find("global_generator") != std::string::npos) global = &cell;
  }
  ASSERT_TRUE(own && global) << report.dump().substr(0, 2000);
  EXPECT_EQ(own->at("verdict"), "nondeterministic");
  EXPECT_NE(own->value("cause", "").find("torch.Generator(device='cuda:0').manual_seed(seed)"), std::string::npos)
      << own->dump().substr(0, 3000);
  EXPECT_EQ(global->at("verdict"), "deterministic") << global->dump().substr(0, 3000);
  bool listed = false;
  for (const auto& source : global->value("random_sources", json::array()))
    listed = listed || source.at("name") == "torch (cuda:0)";
  EXPECT_TRUE(listed) << global->value("random_sources", json::array()).dump();
}

// A py cell on CUDA names the kernels its digested runs launched (torch.profiler's CUDA activity), as a C++
// cell does: the eager step's elementwise and index_add kernels with their grids and blocks, the compiled
// step's Triton kernels, each sequence digested as the C++ tracer digests it, each digested run with its
// digest. index_add's atomic adds may diverge: exit 1 is an answer too.
TEST_F(Gpu, PyCellsNameTheKernelsTheirDigestedRunsLaunched) {
  const std::string step = std::string(test_paths::kSourceDir) + "/tests/gpu/py/cuda_step.py:make";
  const auto result = run("py " + step +
                          " --device cuda --repeats 2 --processes 2 --no-cost --profile default"
                          " --axis compile=off,default --json " +
                          path("py.json"));
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 1) << result.output;
  const auto report = json::parse(slurp(path("py.json")));
  expect_kernels_named(report);
  const repro_audit::Pattern dimensions("[0-9]+,[0-9]+,[0-9]+");
  const auto names_of = [&](const json& cell) {
    std::vector<std::string> names;
    for (const auto& observation : cell.at("observations")) {
      bool recorded = false;  // the recorded runs and the plain runs between them are not traced
      for (const auto& run : observation.at("runs")) {
        recorded = recorded || run.value("per_op", false);
        EXPECT_EQ(run.contains("kernel_digest"), !recorded && !run.value("warmup", false)) << run.dump();
      }
      for (const auto& sequence : observation.at("kernel_sequences")) {
        std::vector<repro_audit::KernelRecord> records;
        for (const auto& kernel : sequence.at("kernels")) {
          records.push_back(
              {kernel.at("name").get<std::string>(), kernel.value("grid", ""), kernel.value("block", "")});
          EXPECT_TRUE(dimensions.matches(records.back().grid)) << kernel.dump();
          EXPECT_TRUE(dimensions.matches(records.back().block)) << kernel.dump();
          names.push_back(records.back().name);
        }
        EXPECT_EQ(sequence.at("digest"), repro_audit::kernel_sequence_digest(records)) << sequence.dump();
      }
    }
    return names;
  };
  const auto any_name = [](const std::vector<std::string>& names, const std::string& part) {
    return std::any_of(names.begin(), names.end(),
                       [&](const auto& name) { return name.find(part) != std::string::npos; });
  };
  const auto eager = names_of(cell_of(report, "py.cuda_step-make/call@cuda:0"));
  EXPECT_TRUE(any_name(eager, "index")) << json(eager).dump();
  EXPECT_TRUE(any_name(eager, "elementwise")) << json(eager).dump();
  const auto compiled = names_of(cell_of(report, "py.cuda_step-make/call@cuda:0|compile=default"));
  EXPECT_TRUE(any_name(compiled, "triton")) << json(compiled).dump();
}

// Every probe's Python twin run on the GPU under strict gives the C++ worker's bits, output for output
// (selftest --python on CUDA; the CLI tier checks the same on the CPU). Printed for the record.
TEST_F(Gpu, EveryProbeMatchesItsPythonTwinOnTheGpu) {
  const std::string python = test_paths::kPython;
  if (python.empty() || shell(python + " -c 'import torch, xxhash'").exit_code != 0)
    GTEST_SKIP() << "no Python with torch and xxhash at " << python;
  const auto result = run("selftest --device cuda --python " + python + " --python-only");
  std::printf("%s\n", result.output.c_str());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find(" probes on cuda:0 under strict"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Python parity passed"), std::string::npos) << result.output;
}

// libtorch warns of sdpa's atomic backward under warn-only once per process and kernel (TORCH_WARN_ONCE): an
// H200 audit heard it only in the first such cell of a worker, and said `nondeterministic` of the others.
// Workers ask for every warning, so each cell of the same kernel in one worker warns.
TEST_F(Gpu, EveryWarnOnlyAttentionCellHearsItsWarning) {
  const auto report = audit(
      "--probe sdpa_backward/flash-bf16 --probe sdpa_backward/flash-causal-bf16 --probe sdpa_backward/efficient-f32"
      " --probe sdpa_backward/efficient-causal-f32 --profile strict-warn --repeats 4 --processes 1 --no-cost",
      0);
  int warned = 0;
  for (const auto& cell : report.at("cells")) {
    EXPECT_EQ(cell.at("verdict"), "warns") << cell.at("key");
    warned += cell.at("verdict") == "warns";
  }
  EXPECT_EQ(warned, 4);
}

// The upstream bug the first GPU runs found: AdaptiveMaxPool3d's CUDA backward is documented
// deterministic and diverges; the audit says so and fails (exit 1).
TEST_F(Gpu, AdaptiveMaxPool3dStillContradictsItsDocumentation) {
  std::string output;
  const auto report = audit("--probe pooling/adaptive_max3d-f32 --profile default", 1, &output);
  EXPECT_EQ(cell_of(report, "pooling/adaptive_max3d-f32@cuda:0").at("verdict"), "nondeterministic");
  EXPECT_NE(output.find("documented deterministic, but runs diverged"), std::string::npos) << output;
}

// Per-op digests of a user's CUDA step taken on the device (recording/tensor_digester.h, the runner's
// DeviceDigests): the eager origin is the index_add, the compiled origin names the Triton kernel behind
// Inductor's input-alignment wrapper, and the report says what the recorded runs cost against plain runs
// of the same process (printed for the record: the ratios the next GPU lease measures).
TEST_F(Gpu, PerOpDigestsOnTheDeviceNameTheEagerAndCompiledOrigins) {
  const auto step = std::string(test_paths::kSourceDir) + "/tests/gpu/py/cuda_step.py:make";
  const auto report_path = path("py.json");
  const auto result = run("py " + step +
                          " --device cuda --repeats 8 --processes 1 --profile default --axis compile=off,default"
                          " --json " +
                          report_path);
  if (result.output.find("no Python found next to the libtorch") != std::string::npos)
    GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(result.exit_code, 1) << result.output;
  std::printf("%s\n", result.output.c_str());
  const auto report = json::parse(slurp(report_path));
  const auto& eager = cell_of(report, "py.cuda_step-make/call@cuda:0");
  EXPECT_EQ(eager.at("verdict"), "nondeterministic");
  ASSERT_TRUE(eager.contains("origin")) << eager.dump();
  EXPECT_EQ(eager.at("origin").at("op"), "aten::index_add") << eager.at("origin").dump();
  for (const auto& sequence : eager.at("observations").at(0).at("op_sequences"))
    EXPECT_GE(sequence.at("ops").size(), 6u);
  const auto& compiled = cell_of(report, "py.cuda_step-make/call@cuda:0|compile=default");
  ASSERT_TRUE(compiled.contains("origin")) << compiled.dump();
  EXPECT_EQ(compiled.at("origin").at("op").get<std::string>().rfind("triton_", 0), 0u)  // within its graph
      << compiled.at("origin").dump();
  EXPECT_NE(result.output.find("per-op digests: a run took"), std::string::npos) << result.output;
}

}  // namespace
