// Inputs identical everywhere: every probe's inputs, made by the real binary (`export-inputs`) under
// each ATen CPU capability this CPU runs, MKL_CBWR values and thread counts, have one digest under the
// portable scheme; and the portable tensors hold the golden values bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../core/h200_audit.h"
#include "config/settings.h"
#include "fingerprint/cpu_info.h"
#include "probe/portable_tensor.h"
#include "probe/probe.h"
#include "probe/probe_catalogue.h"
#include "protocol/observation_json.h"
#include "protocol/worker_protocol.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// Every CPU variant of every probe that makes inputs (the fault controls crash or hang on purpose), or
// of the probes named in `only`.
std::vector<Cell> every_cell(const std::set<std::string>& only = {}) {
  std::vector<Cell> cells;
  for (const auto& probe : registered_catalogue()) {
    if (!probe.in_default_suite && !probe.control_expects) continue;
    if (!only.empty() && !only.count(probe.name)) continue;
    for (const auto& variant : probe.variants) {
      if (std::find(variant.devices.begin(), variant.devices.end(), "cpu") == variant.devices.end()) continue;
      Cell cell;
      cell.probe = probe.name;
      cell.variant = variant.name;
      cell.device = "cpu";
      cell.settings = make_flag_set({}, "cpu");
      cell.key = cell_key(probe.name, variant.name, "cpu", cell.settings);
      cells.push_back(cell);
    }
  }
  return cells;
}

// key -> input digest, as `export-inputs` made the request's inputs with `environment` set (digests only:
// no folder, so nothing is saved).
std::map<std::string, std::string> exported_digests(const WorkerRequest& request, const std::string& environment,
                                                    const fs::path& folder) {
  const auto directories = nlohmann::json(std::vector<std::string>(request.cells.size()));
  const auto request_file = folder / "request.json";
  fs::create_directories(folder);
  std::ofstream(request_file) << nlohmann::json{{"request", request_to_json(request)}, {"directories", directories}};
  const auto command = "env " + environment + " " + std::string(test_paths::kBinary) + " export-inputs < " +
                       request_file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (auto n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << output;
  std::map<std::string, std::string> digests;
  std::size_t start = 0;
  for (std::size_t end; (end = output.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto answer = nlohmann::json::parse(output.substr(start, end - start), nullptr, false);
    if (answer.is_discarded() || !answer.is_object()) continue;
    EXPECT_FALSE(answer.contains("error")) << answer.dump();
    digests[answer.value("key", "")] = answer.value("input_digest", "");
  }
  fs::remove_all(folder);
  EXPECT_EQ(digests.size(), request.cells.size()) << output;
  return digests;
}

// probe/variant -> input digest, as `export-inputs` made them with `environment` set and `threads`.
std::map<std::string, std::string> input_digests(const std::string& environment, const std::string& threads,
                                                 InputScheme scheme, const fs::path& folder,
                                                 const std::set<std::string>& only = {}) {
  WorkerRequest request;
  request.cells = every_cell(only);
  request.process_settings = {{"threads", threads}};
  request.input_scheme = scheme;
  return exported_digests(request, environment, folder);
}

struct Setup {
  std::string environment;
  std::string threads;
};

// The capabilities this CPU runs (never one it lacks: no test depends on the host's ISA), MKL's
// reproducibility branches and both thread counts.
std::vector<Setup> setups() {
  std::vector<Setup> result = {{"-u ATEN_CPU_CAPABILITY -u MKL_CBWR", "2"},
                               {"-u ATEN_CPU_CAPABILITY MKL_CBWR=COMPATIBLE", "1"}};
  for (const auto& capability : runnable_cpu_capabilities(parse_cpu_info(read_proc_cpuinfo()).flags))
    result.push_back({"ATEN_CPU_CAPABILITY=" + capability + " MKL_CBWR=AUTO", capability == "default" ? "1" : "2"});
  return result;
}

TEST(PortableInputs, EveryProbesInputsAreTheSameUnderEveryCapabilityCbwrAndThreadCount) {
  const auto folder = fs::temp_directory_path() / ("portable-inputs-" + std::to_string(getpid()));
  const auto all = setups();
  const auto reference = input_digests(all.front().environment, all.front().threads, InputScheme::portable, folder);
  ASSERT_FALSE(reference.empty());
  // Every probe of the default suite makes inputs (the fault controls need none).
  for (const auto& probe : registered_catalogue())
    if (probe.in_default_suite)
      for (const auto& [key, digest] : reference)
        if (key.rfind(probe.name + "/", 0) == 0) EXPECT_EQ(digest.size(), 32u) << key;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const auto digests = input_digests(all[i].environment, all[i].threads, InputScheme::portable, folder);
    for (const auto& [key, digest] : reference)
      EXPECT_EQ(digests.count(key) ? digests.at(key) : "missing", digest)
          << key << " under " << all[i].environment << " threads=" << all[i].threads;
  }
}

// The reason for the portable scheme, kept visible: ATen's generator gives other inputs under another
// capability. Only where this CPU runs more than one. Three probes' inputs show it (2^22 values drawn by
// randn in sum and cumsum, randn and randint in index_add, f32 and f64 among them); every probe's inputs
// are the same under the portable scheme (above).
TEST(PortableInputs, AtensGeneratorGivesOtherInputsUnderAnotherCapability) {
  const auto capabilities = runnable_cpu_capabilities(parse_cpu_info(read_proc_cpuinfo()).flags);
  if (capabilities.size() < 2) GTEST_SKIP() << "this CPU runs one ATen capability";
  const auto folder = fs::temp_directory_path() / ("aten-inputs-" + std::to_string(getpid()));
  const std::set<std::string> only = {"sum", "cumsum", "index_add"};
  const auto lowest =
      input_digests("ATEN_CPU_CAPABILITY=" + capabilities.front(), "1", InputScheme::aten, folder, only);
  const auto highest =
      input_digests("ATEN_CPU_CAPABILITY=" + capabilities.back(), "1", InputScheme::aten, folder, only);
  ASSERT_FALSE(lowest.empty());
  int differing = 0;
  for (const auto& [key, digest] : lowest) differing += highest.count(key) && highest.at(key) != digest;
  EXPECT_GT(differing, 0) << capabilities.front() << " vs " << capabilities.back();
}

// The tensors hold the golden values (tests/core/portable_values_test.cc) in their own dtypes.
TEST(PortableInputs, TensorsHoldTheGoldenValues) {
  const auto f16 = portable_tensor(PortableKind::spread, {0, 0}, {2, 2}, at::kHalf);
  EXPECT_EQ(f16.scalar_type(), at::kHalf);
  EXPECT_EQ(f16.flatten()[2].item<double>(), -6.265625);
  const auto bf16 = portable_tensor(PortableKind::spread, {0, 0}, {4}, at::kBFloat16);
  EXPECT_TRUE(at::equal(bf16.to(at::kDouble), at::tensor({-0.08251953125, 1.5703125, -6.125, 2.515625}, at::kDouble)));
  const auto f64 = portable_tensor(PortableKind::unit, {0, 1}, {4}, at::kDouble);
  EXPECT_EQ(f64[0].item<double>(), 0.9458807832621713);
  const auto integers = portable_tensor(PortableKind::integer, {0, 2}, {6}, at::kLong, 0, 1000);
  EXPECT_TRUE(at::equal(integers, at::tensor({485, 383, 748, 153, 695, 705}, at::kLong)));
  EXPECT_THROW(portable_tensor(PortableKind::spread, {0, 0}, {4}, at::kInt), std::invalid_argument);
}

// An H200 made these cells' inputs with its integer kernels (tests/core/h200_lease_test.cc's third lease); made
// here on the CPU in the same CUDA shapes, as `repro` exports them, they have the same digests. The fused
// attention cells among them export although this CPU runs no such backend.
TEST(PortableInputs, TheCpuMakesTheInputsAGpuMadeInItsShapes) {
  const auto report = testing::fixture_json("h200-torch-2.11.0-default-audit-2026-11-28.json.gz");
  const std::set<std::string> keys = {"sdpa_backward/efficient-f32@cuda:0",
                                      "sdpa_backward/cudnn-bf16@cuda:0",
                                      "sdpa_backward/flash-causal-f16@cuda:0",
                                      "index_add/f32@cuda:0",
                                      "bincount/f32@cuda:0",
                                      "rnn/lstm-f32@cuda:0",
                                      "histc/f64@cuda:0",
                                      "scatter_reduce/sum-f32@cuda:0"};
  WorkerRequest request;
  request.input_scheme = InputScheme::portable;
  std::map<std::string, std::string> made_there;
  for (const auto& cell : report.at("cells")) {
    if (!keys.count(cell.at("key"))) continue;
    made_there[cell.at("key")] = cell.at("observations").at(0).at("input_digest");
    request.cells.push_back(cell.get<Cell>());
  }
  ASSERT_EQ(made_there.size(), keys.size());
  const auto folder = fs::temp_directory_path() / ("gpu-made-inputs-" + std::to_string(getpid()));
  EXPECT_EQ(exported_digests(request, "", folder), made_there);
}

// A device makes them with its integer kernels (probe/portable_tensor.h): the same kernels on the CPU
// give the integer code's bits, for every kind and dtype, many streams and lengths (a length that is no
// multiple of a vector's, an empty one), and ranges up to the largest the kernels take.
TEST(PortableInputs, TheDevicesKernelsMakeTheIntegerCodesBits) {
  const std::vector<std::vector<std::int64_t>> shapes = {{0}, {1}, {37}, {3, 5, 7}, {65536 + 13}};
  const std::vector<Stream> streams = {{0, 0}, {0, 1}, {42, 7}, {~std::uint64_t{0}, 3}, {123456789, 1000}};
  const auto same_bits = [](const at::Tensor& a, const at::Tensor& b) {
    return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() &&
           (a.numel() == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
  };
  int compared = 0;
  for (const auto& sizes : shapes)
    for (const auto& stream : streams) {
      for (const auto kind : {PortableKind::spread, PortableKind::unit})
        for (const auto dtype : {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble}) {
          const auto made = portable_tensor_by_kernels(kind, stream, sizes, dtype, 0, 0, at::kCPU);
          EXPECT_TRUE(same_bits(made, portable_tensor(kind, stream, sizes, dtype)))
              << c10::toString(dtype) << " stream " << stream.seed << "/" << stream.stream << " " << sizes.size();
          ++compared;
        }
      for (const auto& [low, high] :
           std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1},
                                                              {0, 1000},
                                                              {-5, 5},
                                                              {7, 8},
                                                              {0, std::int64_t{1} << 40},
                                                              {-(std::int64_t{1} << 61), std::int64_t{1} << 61},
                                                              {0, std::numeric_limits<std::int64_t>::max()}}) {
        const auto made =
            portable_tensor_by_kernels(PortableKind::integer, stream, sizes, at::kLong, low, high, at::kCPU);
        EXPECT_TRUE(same_bits(made, portable_tensor(PortableKind::integer, stream, sizes, at::kLong, low, high)))
            << "[" << low << ", " << high << ")";
        ++compared;
      }
    }
  EXPECT_EQ(compared, 5 * 5 * (8 + 7));
  // The unit values reach their extremes: 0 and the largest below 1 are made the same way as the rest.
  const auto many = portable_tensor_by_kernels(PortableKind::unit, {1, 2}, {1 << 16}, at::kBFloat16, 0, 0, at::kCPU);
  EXPECT_EQ(many.min().item<double>(), 0.0);
  EXPECT_EQ(many.max().item<double>(), 1.0 - 1.0 / 256);
}

// A probe's context: the draws follow each other as streams 0, 1, 2, ... of the seed.
TEST(PortableInputs, AContextsDrawsAreTheSeedsStreamsInOrder) {
  ProbeContext context(at::kCPU, 0, Variant(DType::f32).info());
  EXPECT_TRUE(at::equal(context.randn({5}), portable_tensor(PortableKind::spread, {0, 0}, {5}, at::kFloat)));
  EXPECT_TRUE(at::equal(context.rand({5}, at::kDouble), portable_tensor(PortableKind::unit, {0, 1}, {5}, at::kDouble)));
  EXPECT_TRUE(
      at::equal(context.randint(1000, {6}), portable_tensor(PortableKind::integer, {0, 2}, {6}, at::kLong, 0, 1000)));
}

}  // namespace
}  // namespace repro_audit
