#include <gtest/gtest.h>

#include <algorithm>

#include "repro/parity.h"
#include "repro/python_script.h"

namespace repro_audit {
namespace {

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(PythonSettings, EverySettingHasAPythonSpelling) {
  for (const auto& name : setting_names()) EXPECT_TRUE(has_python_spelling(name)) << name;
}

TEST(PythonSettings, SpellEnvironmentVariablesAndTorchCalls) {
  const auto strict = python_settings({{"deterministic_algorithms", "on"},
                                       {"threads", "1"},
                                       {"cpu_capability", "default"},
                                       {"seed", "7"},
                                       {"mkl_cbwr", "unset"},
                                       {"cudnn_benchmark", "n/a"}},
                                      false);
  EXPECT_TRUE(has_line(strict.environment, "os.environ[\"ATEN_CPU_CAPABILITY\"] = \"default\""));
  EXPECT_TRUE(has_line(strict.environment, "os.environ.pop(\"MKL_CBWR\", None)"));
  EXPECT_TRUE(has_line(strict.calls, "torch.use_deterministic_algorithms(True, warn_only=False)"));
  EXPECT_TRUE(has_line(strict.calls, "torch.set_num_threads(1)"));
  EXPECT_EQ(strict.seed, "7");
  EXPECT_EQ(strict.calls.size(), 2u);  // n/a settings are not spelled
  const auto warn = python_settings({{"deterministic_algorithms", "warn"}, {"cudnn_benchmark", "true"}}, true);
  EXPECT_TRUE(has_line(warn.calls, "torch.use_deterministic_algorithms(True, warn_only=True)"));
  EXPECT_TRUE(has_line(warn.calls, "torch.backends.cudnn.benchmark = True"));
  // On CUDA the script runs ATen's kernels, as libtorch did, not torch._native's Python ones.
  EXPECT_TRUE(has_line(warn.environment, "os.environ[\"TORCH_DISABLE_NATIVE_JIT\"] = \"1\""));
}

CellReport deterministic_cell() {
  CellReport cell;
  cell.cell.key = "p/f32@cpu";
  cell.cell.probe = "p";
  cell.verdict.kind = VerdictKind::deterministic;
  ProcessObservation observation;
  observation.runs.push_back({"run", {{"output", "aaa"}, {"grad", "bbb"}}});
  cell.observations.push_back(observation);
  return cell;
}

TEST(Parity, EqualDigestsAreEqual) {
  ProbeInfo probe{.name = "p"};
  const auto outcome = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"bbb"}})");
  EXPECT_EQ(outcome.status, "equal") << outcome.detail;
}

TEST(Parity, AMismatchNamesTheFirstDifferingOutput) {
  ProbeInfo probe{.name = "p"};
  const auto outcome = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"ccc"}})");
  EXPECT_EQ(outcome.status, "mismatch");
  EXPECT_EQ(outcome.probe, "p");
  EXPECT_EQ(outcome.detail, "output 'grad': Python ccc vs C++ bbb");
  const auto verdict =
      compare_with_script(deterministic_cell(), probe, R"({"verdict":"raises","detail":"no deterministic kernel"})");
  EXPECT_EQ(verdict.status, "mismatch");
  EXPECT_EQ(verdict.detail,
            "verdict: Python raises (no deterministic kernel), C++ deterministic; first difference: output 'output' is "
            "missing from the Python run");
}

TEST(Parity, ADeclaredDifferenceIsComparedByVerdictAndMustStillBeTrue) {
  ProbeInfo probe{.name = "p"};
  probe.python.differs_reason = "its kernel is C++ only";
  const auto other_bits = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"xxx","grad":"yyy"}})");
  EXPECT_EQ(other_bits.status, "verdict");
  const auto same_bits = compare_with_script(
      deterministic_cell(), probe,
      R"({"verdict":"deterministic","digests_comparable":true,"outputs":{"output":"aaa","grad":"bbb"}})");
  EXPECT_EQ(same_bits.status, "mismatch");
  EXPECT_NE(same_bits.detail.find("the declaration is stale"), std::string::npos);
}

TEST(ReproFolders, AreNamedAfterTheKey) {
  EXPECT_EQ(folder_name_of("index_add/f32@cpu|deterministic_algorithms=on,threads=2"),
            "index_add_f32_cpu_deterministic_algorithms=on_threads=2");
}

}  // namespace
}  // namespace repro_audit
