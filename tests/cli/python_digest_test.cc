// `repro-audit py`, what the runner records of a run: the digest of every kind of result, and the
// kernels and per-op digests of the digested runs, as the C++ workers record theirs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "python_callable.h"
#include "trace/tracer.h"

namespace {

using namespace testing_cli;

// The py runner's digest tells results apart by what lies beyond dtype, shape and values: a conjugate or
// negative view, a quantized tensor's scale, zero point or per-channel scales, a sparse tensor's values.
// Sparse results of every layout, one of 2^40 elements and a dense one over 2 GiB are digested as they
// are, with no error blamed on the callable.
TEST_F(PythonCallable, TheDigestTellsApartEveryPropertyAndTakesEveryLayout) {
  const std::string properties = std::string(test_paths::kSourceDir) + "/tests/cli/py/digest_properties.py";
  const std::vector<std::string> alternating = {"alternates_conj",           "alternates_neg",
                                                "alternates_scale",          "alternates_zero_point",
                                                "alternates_channel_scales", "alternates_csr_value"};
  const std::vector<std::string> steady = {"sparse_layouts", "huge_sparse", "two_gib", "packed_quantized", "nested"};
  // Where a step's changing bits hide: walked (a dataclass), or named as what the digest cannot walk.
  const std::vector<std::string> hidden = {"in_a_dataclass", "in_a_set", "in_an_object"};
  std::string config = "models:\n";
  for (const auto& list : {alternating, steady, hidden})
    for (const auto& name : list) config += "  - callable: " + properties + ":" + name + "\n";
  const auto cells = audit("--config " + write("audit.yaml", config) +
                               " --device cpu --repeats 2 --processes 1 --no-cost --profile default --axis threads=1",
                           1);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  const auto cell = [&](const std::string& name) {
    return cells.at("py.digest_properties-" + name + "/call@cpu|threads=1");
  };
  for (const auto& name : alternating) EXPECT_EQ(cell(name).at("verdict"), "nondeterministic") << cell(name).dump();
  for (const auto& name : steady) EXPECT_EQ(cell(name).at("verdict"), "deterministic") << cell(name).dump();
  EXPECT_EQ(output_names(cell("sparse_layouts")),
            (std::vector<std::string>{"output.coo", "output.csr", "output.csc", "output.bsr", "output.bsc"}));
  EXPECT_EQ(output_names(cell("nested")), (std::vector<std::string>{"output.0", "output.1"}));
  EXPECT_EQ(cell("in_a_dataclass").at("verdict"), "nondeterministic") << cell("in_a_dataclass").dump();
  EXPECT_EQ(output_names(cell("in_a_dataclass")), (std::vector<std::string>{"output.loss", "output.extra.noise"}));
  EXPECT_EQ(cell("in_a_set").at("verdict"), "error");
  EXPECT_NE(cell("in_a_set").dump().find("output is a set holding tensors, which has no order"), std::string::npos)
      << cell("in_a_set").dump();
  EXPECT_EQ(cell("in_an_object").at("verdict"), "error");
  EXPECT_NE(cell("in_an_object").dump().find("output.1 is a Holder holding tensors that the digest cannot walk"),
            std::string::npos)
      << cell("in_an_object").dump();
}

// The kernels of a py cell's digested runs, recorded as C++ cells record theirs (CUDA: torch.profiler's
// kernels; here the test switch takes the profiler's CPU ATen ops for kernels, real events through the
// same conversion): one sequence per distinct digest, each traced run's digest as the C++ tracer computes
// it, none for warm-up and per-op runs; a step whose ops change between runs has kernels_varied, `show` lists the
// ops, and `compare` of a step that swapped an op names the swap.
TEST_F(PythonCallable, RecordsTheKernelsOfItsDigestedRunsAsCppCellsDo) {
  const std::string paths = std::string(test_paths::kSourceDir) + "/tests/cli/py/kernel_paths.py";
  const auto doubling = "models:\n  - callable: " + paths + ":doubles\n";
  const std::string arguments = " --device cpu --repeats 2 --no-cost --profile default --axis threads=1";
  const std::string switched = "env REPRO_AUDIT_TEST_CPU_OPS_AS_KERNELS=1";
  const auto cells = audit("--config " + write("both.yaml", doubling + "  - callable: " + paths + ":alternates\n") +
                               " --processes 2" + arguments,
                           0, switched);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  const auto& doubles = cells.at("py.kernel_paths-doubles/call@cpu|threads=1");
  const auto& alternates = cells.at("py.kernel_paths-alternates/call@cpu|threads=1");
  const auto add = repro_audit::kernel_sequence_digest({{"aten::add", "", ""}});
  const auto mul = repro_audit::kernel_sequence_digest({{"aten::mul", "", ""}});
  EXPECT_EQ(doubles.at("verdict"), "deterministic");
  EXPECT_FALSE(doubles.at("kernels_varied").get<bool>());
  EXPECT_EQ(doubles.value("kernel_digest", ""), add) << doubles.dump();
  for (const auto* cell : {&doubles, &alternates}) {
    ASSERT_EQ(cell->at("observations").size(), 2u);
    for (const auto& observation : cell->at("observations")) {
      EXPECT_FALSE(observation.contains("trace_unavailable")) << observation.dump();
      ASSERT_TRUE(observation.contains("kernel_sequences")) << observation.dump();
      for (const auto& sequence : observation.at("kernel_sequences")) {
        std::vector<repro_audit::KernelRecord> records;
        for (const auto& kernel : sequence.at("kernels"))
          records.push_back(
              {kernel.at("name").get<std::string>(), kernel.value("grid", ""), kernel.value("block", "")});
        EXPECT_EQ(sequence.at("digest"), repro_audit::kernel_sequence_digest(records)) << sequence.dump();
      }
      // The digested runs are traced; neither the warm-up, nor the recorded runs, nor the plain runs
      // between them (the recorded runs' cost peers) are.
      bool recorded = false;
      for (const auto& run : observation.at("runs")) {
        recorded = recorded || run.value("per_op", false);
        EXPECT_EQ(run.contains("kernel_digest"), !recorded && !run.value("warmup", false)) << run.dump();
      }
    }
  }
  EXPECT_TRUE(alternates.at("kernels_varied").get<bool>()) << alternates.dump();
  std::set<std::string> alternated;
  for (const auto& run : alternates.at("observations").at(0).at("runs"))
    if (run.contains("kernel_digest")) alternated.insert(run.at("kernel_digest"));
  EXPECT_EQ(alternated, (std::set<std::string>{add, mul}));
  const auto shown = run("show " + path("report.json") + " kernel_paths-doubles");
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("kernels: the same in every run"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("process 1, sequence " + add.substr(0, 12) + " (1 launches):\n      aten::add\n"),
            std::string::npos)
      << shown.output;
  EXPECT_NE(run("show " + path("report.json") + " kernel_paths-alternates").output.find("SELECTION VARIED"),
            std::string::npos);

  std::filesystem::rename(path("report.json"), path("by_add.json"));
  const auto swapped = audit("--config " + write("doubles.yaml", doubling) + " --processes 1" + arguments, 0,
                             switched + " REPRO_AUDIT_TEST_DOUBLING=mul");
  EXPECT_EQ(swapped.at("py.kernel_paths-doubles/call@cpu|threads=1").value("kernel_digest", ""), mul);
  const auto compared = run("compare " + path("by_add.json") + " " + path("report.json"));
  EXPECT_NE(compared.output.find("aten::add -> aten::mul"), std::string::npos) << compared.output;
}

// The runner's device digests (DeviceDigests: tokens while a run records, read back when it ends) on
// the CPU, through the host's reduction (REPRO_AUDIT_TEST_HOST_WORD_SUMS, tests only): the eager origin
// is the op it is with the host's digests, and the ops' digests are of the word-sums form.
TEST_F(PythonCallable, DeviceDigestsNameTheSameOriginAsHostDigests) {
  const std::string arguments = kExample +
                                ":scatter_sum --device cpu --repeats 8 --processes 1 --no-cost "
                                "--profile default --axis threads=4";
  std::map<std::string, nlohmann::json> host, device;
  // The race must show in the recorded runs too, for an origin to be named: a busy machine may run them
  // one thread at a time, so an audit that named none is run again.
  const auto raced = [](const std::map<std::string, nlohmann::json>& cells) {
    return !cells.empty() && cells.begin()->second.contains("origin");
  };
  for (int attempt = 0; attempt < 4 && !raced(host); ++attempt) {
    host = audit(arguments, -1);
    if (host.empty()) break;
  }
  if (host.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  for (int attempt = 0; attempt < 4 && !raced(device); ++attempt)
    device = audit(arguments, -1, "REPRO_AUDIT_TEST_HOST_WORD_SUMS=1");
  const auto& with_host = host.begin()->second;
  const auto& with_device = device.begin()->second;
  ASSERT_TRUE(with_host.contains("origin")) << with_host.dump();
  ASSERT_TRUE(with_device.contains("origin")) << with_device.dump();
  EXPECT_EQ(with_device.at("origin").at("op"), with_host.at("origin").at("op"));
  EXPECT_EQ(with_device.at("origin").at("op"), "aten::index_put_");
  // The same ops, each digested otherwise: the device's form, not the host's.
  const auto& host_ops = with_host.at("observations").at(0).at("op_sequences").at(0).at("ops");
  const auto& device_ops = with_device.at("observations").at(0).at("op_sequences").at(0).at("ops");
  ASSERT_EQ(host_ops.size(), device_ops.size());
  for (std::size_t i = 0; i < host_ops.size(); ++i) {
    EXPECT_EQ(host_ops[i].at("name"), device_ops[i].at("name"));
    if (host_ops[i].at("outputs") != "") EXPECT_NE(host_ops[i].at("outputs"), device_ops[i].at("outputs")) << i;
  }
}

}  // namespace
