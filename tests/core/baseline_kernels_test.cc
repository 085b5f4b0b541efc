// Kernel records in baselines: each sequence written once under `kernels`, cells naming it by digest;
// baselines written before they were kept still load and gate.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "compare/baseline.h"
#include "compare/compare.h"
#include "compare/gate_policy.h"
#include "common/user_error.h"
#include "sample_reports.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

using testing::baseline_error;

using testing::cell;
using testing::report_of;

const std::string kSchema = std::string("schema: ") + kBaselineSchema + "\n";
const std::string kDigestA(32, 'a'), kDigestB(32, 'b');

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Three flag sets of conv2d that ran the same kernels, and matmul with others.
Report named_report() {
  std::vector<CellReport> cells;
  for (const auto* column : {"default threads=1", "strict threads=1"}) {
    cells.push_back(cell("conv2d", "f32", column, VerdictKind::deterministic, std::string(32, 'c')));
    testing::set_kernels(cells.back(), kDigestA, testing::onednn_convolution_kernels(true));
  }
  cells.push_back(testing::with_threads(cells[0], "2"));
  cells.push_back(cell("matmul", "f32", "default threads=1", VerdictKind::deterministic, std::string(32, 'd')));
  testing::set_kernels(cells.back(), kDigestB, testing::mkl_sgemm_kernels(false));
  return report_of(cells);
}

TEST(BaselineKernels, EachSequenceIsWrittenOnceAndEveryCellGetsItsRecordsBack) {
  const auto baseline = baseline_from_report(named_report());
  ASSERT_TRUE(baseline.cells[0].kernels);
  EXPECT_EQ(baseline.cells[0].kernels, baseline.cells[2].kernels);  // one copy, shared
  EXPECT_EQ(baseline.cells[3].kernels->at(0).name, testing::mkl_banner(false));
  const auto yaml = baseline_to_yaml(baseline);
  EXPECT_EQ(occurrences(yaml, "convolution jit:avx512_core"), 1u) << yaml;
  EXPECT_EQ(occurrences(yaml, "kernel_digest: " + kDigestA), 3u);
  const auto loaded = parse_baseline(yaml, "base.yaml");
  ASSERT_EQ(loaded.cells.size(), 4u);
  for (std::size_t i = 0; i < loaded.cells.size(); ++i) {
    EXPECT_EQ(loaded.cells[i].kernel_digest, baseline.cells[i].kernel_digest);
    ASSERT_TRUE(loaded.cells[i].kernels) << i;
    ASSERT_EQ(loaded.cells[i].kernels->size(), baseline.cells[i].kernels->size());
    for (std::size_t k = 0; k < loaded.cells[i].kernels->size(); ++k)
      EXPECT_EQ(loaded.cells[i].kernels->at(k).name, baseline.cells[i].kernels->at(k).name);
  }
  EXPECT_EQ(loaded.cells[0].kernels, loaded.cells[1].kernels);
  EXPECT_EQ(baseline_to_yaml(loaded), yaml);  // written again, byte for byte
}

TEST(BaselineKernels, GridsAndBlocksRoundTripAndCellsWithoutRecordsStayAsBefore) {
  auto report = named_report();
  report.cells[3].observations[0].kernel_sequences[0].second = {
      {"sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x32", "66,1,1", "384,1,1"},
      {"void at::native::reduce_kernel<512, 1>(T&&)", "", ""}};
  report.cells[3].observations[1].kernel_sequences.clear();
  const auto yaml = baseline_to_yaml(baseline_from_report(report));
  const auto loaded = parse_baseline(yaml, "base.yaml");
  const auto& records = *loaded.cells[3].kernels;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].grid, "66,1,1");
  EXPECT_EQ(records[0].block, "384,1,1");
  EXPECT_EQ(records[1].name, "void at::native::reduce_kernel<512, 1>(T&&)");
  EXPECT_EQ(records[1].grid, "");
  // A report without kernel records gives the baseline it always gave: no `kernels` at all.
  for (auto& cell : report.cells)
    for (auto& observation : cell.observations) observation.kernel_sequences.clear();
  const auto plain = baseline_to_yaml(baseline_from_report(report));
  EXPECT_EQ(plain.find("kernels:"), std::string::npos);
  EXPECT_EQ(plain.substr(0, plain.find("cells:")), yaml.substr(0, yaml.find("cells:")));
  EXPECT_EQ(yaml.rfind(plain.substr(0, plain.size() - 1), 0), 0u) << "the cells are written as before";
}

TEST(BaselineKernels, ACellNamingAnAbsentSequenceHasNoNames) {
  const auto baseline = parse_baseline(kSchema +
                                           "cells:\n  sum/f32@cpu:\n    verdict: deterministic\n"
                                           "    kernel_digest: " +
                                           kDigestA + "\nkernels:\n  " + kDigestB + ": [aten::sum]\n",
                                       "base.yaml");
  ASSERT_EQ(baseline.cells.size(), 1u);
  EXPECT_EQ(baseline.cells[0].kernel_digest, kDigestA);
  EXPECT_FALSE(baseline.cells[0].kernels);
}

TEST(BaselineKernels, MalformedSequencesNameFileLineColumn) {
  const auto cells = "cells: {}\n";
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels: [a]\n"),
            "base.yaml:3:10: kernels must be a map of kernel digest: [kernel records]");
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels:\n  abc: [a]\n"),
            "base.yaml:4:3: a kernel sequence digest 'abc' is not 32 lower-case hex digits");
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ": aten::sum\n"),
            "base.yaml:4:37: kernel sequence " + kDigestA + " must be a list of kernel records");
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ":\n    - {grid: 1}\n"),
            "base.yaml:5:7: a kernel record has no name");
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ":\n    - {name: k, stream: 7}\n"),
            "base.yaml:5:17: unknown kernel record field 'stream'; valid fields: name, grid, block");
  EXPECT_EQ(baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ":\n    - [a, b]\n"),
            "base.yaml:5:7: a kernel record must be a name or a map of: name, grid, block");
  EXPECT_EQ(
      baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ":\n    - \"a\\x1b[31mb\"\n"),
      "base.yaml:5:7: malformed kernel record in sequence " + kDigestA + ": a control character in a kernel record");
  const auto long_name = std::string(kMaxKernelNameBytes + 1, 'k');
  EXPECT_EQ(
      baseline_error(kSchema + cells + "kernels:\n  " + kDigestA + ": [" + long_name + "]\n"),
      "base.yaml:4:38: malformed kernel record in sequence " + kDigestA + ": a kernel name longer than 16384 bytes");
  std::string many = "kernels:\n  " + kDigestA + ":\n";
  for (std::size_t i = 0; i <= kMaxBaselineKernelRecords; ++i) many += "    - k\n";
  EXPECT_EQ(baseline_error(kSchema + cells + many),
            fmt::format("base.yaml:5:5: kernel sequence {} has {} records; at most {} are read", kDigestA,
                        kMaxBaselineKernelRecords + 1, kMaxBaselineKernelRecords));
}

TEST(BaselineKernels, TheWriterLeavesOutWhatTheReaderWouldRefuse) {
  auto report = named_report();
  report.cells[3].observations[0].kernel_sequences[0].second[1].name = "k\x1b[2J";
  const auto baseline = baseline_from_report(report);
  const auto loaded = parse_baseline(baseline_to_yaml(baseline), "base.yaml");
  EXPECT_TRUE(loaded.cells[0].kernels);
  EXPECT_FALSE(loaded.cells[3].kernels);
  EXPECT_EQ(loaded.cells[3].kernel_digest, kDigestB);
}

// Baselines written before kernel records were kept (tests/core/fixtures: never edit them) load,
// and a gate against a report with names still sees the change, by digest, and says why.
TEST(BaselineKernels, OlderBaselinesWithoutNamesStillGate) {
  for (const auto* name : {"baseline-v1-cpu-default.yaml", "baseline-v2-cpu-amd-epyc-before-fingerprint.yaml"}) {
    SCOPED_TRACE(name);
    const auto path = std::string(test_paths::kFixtureDir) + "/" + name;
    const auto old = load_baseline_file(path);
    ASSERT_FALSE(old.cells.empty());
    for (const auto& cell : old.cells) EXPECT_FALSE(cell.kernels) << cell.key;
    const auto* held = find_snapshot_cell(old, "bincount/f32@cpu|threads=1");
    ASSERT_NE(held, nullptr);
    ASSERT_FALSE(held->kernel_digest.empty());
    auto now = old;
    now.source = "report.json";
    for (auto& cell : now.cells)
      if (cell.key == held->key) {
        cell.kernel_digest = kDigestA;
        cell.kernels =
            std::make_shared<const std::vector<KernelRecord>>(std::vector<KernelRecord>{{"aten::bincount", "", ""}});
      }
    const auto comparison = compare_snapshots(old, now);
    const auto gate = gate_outcome(comparison, default_gate_policy());
    EXPECT_TRUE(gate.passed);
    ASSERT_EQ(gate.warnings.size(), 1u);
    EXPECT_EQ(gate.warnings[0].key, held->key);
    EXPECT_EQ(gate.warnings[0].detail,
              "kernels " + held->kernel_digest.substr(0, 12) + " -> aaaaaaaaaaaa (names not recorded in " + path + ")");
  }
}

// A fuzz seed with CUDA records, grids and blocks: it must load, or the fuzzer starts from an error.
TEST(BaselineKernels, TheFuzzSeedWithCudaNamesLoads) {
  std::ifstream in(std::string(test_paths::kFuzzCorpusDir) + "/baseline/cuda-kernels.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto baseline = parse_baseline(text.str(), "cuda-kernels.yaml");
  ASSERT_EQ(baseline.cells.size(), 2u);
  for (const auto& cell : baseline.cells) {
    ASSERT_TRUE(cell.kernels) << cell.key;
    EXPECT_FALSE(cell.kernels->front().grid.empty());
  }
}

}  // namespace
}  // namespace repro_audit
