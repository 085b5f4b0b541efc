// The gate's platform: every fingerprint field compared on its own, classified as counting for the
// platform or not, and "unknown" when only one side records it.
#include "compare/platform.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "compare/compare.h"
#include "compare/comparison_json.h"
#include "compare/comparison_terminal.h"
#include "compare/comparison_text.h"
#include "compare/gate_policy.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// A version-2 fingerprint of a GPU host that records every field.
json gpu_host() {
  return {{"fingerprint", 2},
          {"tool_version", "0.1.0"},
          {"torch", "2.14.1"},
          {"torch_git", "5c48869e4b4cd8a6bfd5cd3fb9e2e8e01a2f6b2c"},
          {"torch_cuda_build", true},
          {"python", "/opt/venv/bin/python3 (3.11.7)"},
          {"python_torch", "2.14.1+cu130"},
          {"python_torch_path", "/opt/venv/lib/python3.11/site-packages/torch"},
          {"python_xxhash", "3.5.0 (/opt/venv/lib/python3.11/site-packages/xxhash/__init__.py)"},
          {"test_switches", "REPRO_AUDIT_TEST_HOST_WORD_SUMS=1"},
          {"cpu", "Intel(R) Xeon(R) Platinum 8480+"},
          {"cpu_vendor", "GenuineIntel"},
          {"cpu_family", 6},
          {"cpu_model", 143},
          {"cpu_stepping", 8},
          {"cpu_flags", json::array({"amx_bf16", "amx_int8", "amx_tile", "avx", "avx2", "avx512bw", "avx512cd",
                                     "avx512dq", "avx512f", "avx512vl", "f16c", "fma", "sse4_1", "sse4_2"})},
          {"aten_cpu_capability", "AVX512"},
          {"aten_cpu_capabilities", json::array({"default", "avx2", "avx512"})},
          {"blas", "mkl"},
          {"mkl", "2024.2-Product Build 20240605"},
          {"onednn", "3.12.0 (80afa71049cd)"},
          {"openmp", "201511"},
          {"logical_cpus", 224},
          {"threads", 2},
          {"interop_threads", 2},
          {"numerics_environment", {{"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}}},
          {"os", "Linux 6.8.0-45-generic"},
          {"machine", "x86_64"},
          {"cuda",
           {{"compiled_runtime", 13000},
            {"runtime", 13000},
            {"driver", 13020},
            {"available", true},
            {"cudnn", 92400},
            {"cublas", "13.0.2"},
            {"nccl", "2.27.3"},
            {"devices",
             {{{"name", "NVIDIA H100 80GB HBM3"},
               {"sm_count", 132},
               {"compute_capability", "9.0"},
               {"memory_bytes", 85520809984},
               {"ecc", true},
               {"mig", false}}}},
            {"nvml", "580.95.05"}}},
          {"sources", {{"cpu_flags", "/proc/cpuinfo (flags)"}, {"mkl", "at::show_config()"}}}};
}

// One field changed on its own: where it sits in the fingerprint, its two values, whether it counts.
struct FieldCase {
  std::string label;
  std::string pointer;
  json before;
  json after;
  bool platform;
  std::string erase = "";  // what to remove for "not recorded", when not `pointer`
};

std::vector<FieldCase> field_cases() {
  const auto flags = gpu_host()["cpu_flags"];
  auto fewer_flags = flags;
  fewer_flags.erase(fewer_flags.begin());  // amx_bf16
  return {
      {"torch", "/torch", "2.14.1", "2.15.0", true},
      {"torch git", "/torch_git", "5c48869e4b4c", "a0b1c2d3e4f5", true},
      {"Python torch", "/python_torch", "2.14.1+cu130", "2.11.0+cu130", true},
      {"Python", "/python", "/opt/venv/bin/python3 (3.11.7)", "/usr/bin/python3 (3.12.1)", false},
      {"torch CUDA build", "/torch_cuda_build", true, false, true},
      {"CUDA runtime", "/cuda/runtime", 13000, 13020, true},
      {"CUDA compiled runtime", "/cuda/compiled_runtime", 13000, 12080, false},
      {"CUDA driver", "/cuda/driver", 13020, 13000, true},
      {"CUDA available", "/cuda/available", true, false, true},
      {"CUDA unavailable", "/cuda/reason", "no CUDA-capable device is detected", "unknown error", false},
      {"cuDNN", "/cuda/cudnn", 92400, 92500, true},
      {"cuBLAS", "/cuda/cublas", "13.0.2", "13.1.0", true},
      {"NCCL", "/cuda/nccl", "2.27.3", "2.28.1", true},
      {"GPU", "/cuda/devices/0/name", "NVIDIA H100 80GB HBM3", "NVIDIA H200", true},
      {"GPU", "/cuda/devices/0/sm_count", 132, 114, true},
      {"GPU", "/cuda/devices/0/compute_capability", "9.0", "8.0", true},
      {"GPU memory", "/cuda/devices/0/memory_bytes", 85520809984, 85899345920, false},
      {"GPU ECC", "/cuda/devices/0/ecc", true, false, true},
      {"GPU MIG", "/cuda/devices/0/mig", false, true, true},
      {"NVML", "/cuda/nvml", "580.95.05", "580.105.08", false},
      {"NVML unavailable", "/cuda/nvml_unavailable", "libnvidia-ml.so.1: not found", "nvmlInit_v2: 9", false},
      {"CPU", "/cpu", "Intel(R) Xeon(R) Platinum 8480+", "Intel(R) Xeon(R) Platinum 8580", true},
      {"CPU id", "/cpu_vendor", "GenuineIntel", "AuthenticAMD", true},
      {"CPU id", "/cpu_family", 6, 25, true},
      {"CPU id", "/cpu_model", 143, 207, true},
      {"CPU id", "/cpu_stepping", 8, 2, true},
      {"CPU flags", "/cpu_flags", flags, fewer_flags, true},
      {"machine", "/machine", "x86_64", "aarch64", true},
      {"ATen capability", "/aten_cpu_capability", "AVX512", "AVX2", true},
      {"ATen capabilities", "/aten_cpu_capabilities", json::array({"default", "avx2", "avx512"}),
       json::array({"default", "avx2"}), true},
      {"BLAS", "/blas", "mkl", "open", true},
      {"MKL", "/mkl", "2024.2-Product Build 20240605", "2025.0-Product Build 20241024", true},
      {"oneDNN", "/onednn", "3.12.0 (80afa71049cd)", "3.13.0 (1f2e3d4c5b6a)", true},
      {"OpenMP", "/openmp", "201511", "202011", true},
      {"threads", "/threads", 2, 1, true},
      {"interop threads", "/interop_threads", 2, 4, true},
      {"logical CPUs", "/logical_cpus", 224, 2, false},
      {"env CUBLAS_WORKSPACE_CONFIG", "/numerics_environment/CUBLAS_WORKSPACE_CONFIG", ":4096:8", ":16:8", true,
       "/numerics_environment"},
      {"OS", "/os", "Linux 6.8.0-45-generic", "Linux 6.8.0-47-generic", false},
      {"tool", "/tool_version", "0.1.0", "0.2.0", false},
      {"fingerprint", "/fingerprint", 2, 3, false},
  };
}

void erase(json& environment, const std::string& pointer) {
  const json::json_pointer path(pointer);
  environment[path.parent_pointer()].erase(path.back());
}

Comparison compare_environments(const json& before, const json& after) {
  Snapshot old_snapshot, new_snapshot;
  old_snapshot.source = "base.yaml";
  old_snapshot.environment = before;
  new_snapshot.source = "report.json";
  new_snapshot.environment = after;
  return compare_snapshots(old_snapshot, new_snapshot);
}

std::vector<std::string> labels_of(const std::vector<EnvironmentChange>& changes) {
  std::vector<std::string> labels;
  for (const auto& change : changes) labels.push_back(change.field);
  return labels;
}

TEST(Platform, EachFieldAloneChangesThePlatformExactlyWhenItCounts) {
  for (const auto& field : field_cases()) {
    SCOPED_TRACE(field.pointer);
    auto before = gpu_host(), after = gpu_host();
    before[json::json_pointer(field.pointer)] = field.before;
    after[json::json_pointer(field.pointer)] = field.after;
    const auto comparison = compare_environments(before, after);
    ASSERT_EQ(labels_of(comparison.environment_changes), std::vector<std::string>{field.label});
    const auto& change = comparison.environment_changes[0];
    EXPECT_EQ(change.platform, field.platform);
    EXPECT_FALSE(change.unknown);
    EXPECT_EQ(comparison.platform_changed, field.platform);
    EXPECT_EQ(comparison.platform_summary.rfind(field.platform ? "Platform changed: " : "Platform unchanged; ", 0), 0u)
        << comparison.platform_summary;
  }
}

TEST(Platform, AFieldRecordedOnOneSideIsUnknownAndCountsAsPossiblyChanged) {
  std::set<std::string> done;
  for (const auto& field : field_cases()) {
    if (!done.insert(field.label).second) continue;
    for (const bool missing_before : {true, false}) {
      SCOPED_TRACE(field.label + (missing_before ? ": not recorded before" : ": not recorded after"));
      auto before = gpu_host(), after = gpu_host();
      auto& missing = missing_before ? before : after;
      // Every piece of the field goes (the GPU's name, SMs and capability make one field).
      for (const auto& piece : field_cases())
        if (piece.label == field.label) {
          missing[json::json_pointer(piece.pointer)] = piece.before;
          erase(missing, piece.erase.empty() ? piece.pointer : piece.erase);
        }
      auto& present = missing_before ? after : before;
      present[json::json_pointer(field.pointer)] = field.before;
      const auto comparison = compare_environments(before, after);
      ASSERT_EQ(labels_of(comparison.environment_changes), std::vector<std::string>{field.label});
      const auto& change = comparison.environment_changes[0];
      EXPECT_TRUE(change.unknown);
      EXPECT_EQ(change.platform, field.platform);
      EXPECT_EQ((missing_before ? change.before : change.after), "");
      EXPECT_EQ(comparison.platform_changed, field.platform);
      if (field.platform)
        EXPECT_EQ(comparison.platform_summary,
                  fmt::format("Platform changed: not recorded in {}: {} (counted as possibly changed)",
                              missing_before ? "base.yaml" : "report.json", field.label));
    }
  }
}

TEST(Platform, AFieldAbsentOnBothSidesIsNoChange) {
  for (const auto& field : field_cases()) {
    SCOPED_TRACE(field.pointer);
    auto environment = gpu_host();
    environment[json::json_pointer(field.pointer)] = field.before;
    erase(environment, field.erase.empty() ? field.pointer : field.erase);
    const auto comparison = compare_environments(environment, environment);
    EXPECT_TRUE(comparison.environment_changes.empty());
    EXPECT_FALSE(comparison.platform_changed);
  }
  const auto empty = compare_environments(json::object(), json::object());
  EXPECT_TRUE(empty.environment_changes.empty());
  EXPECT_EQ(empty.platform_summary, "Platform unchanged");
}

TEST(Platform, OnlyTheDocumentedFieldsDoNotCount) {
  std::set<std::string> not_platform;
  auto environment = gpu_host();
  environment["cuda"]["reason"] = "x";
  environment["cuda"]["nvml_unavailable"] = "x";
  for (const auto& field : fingerprint_fields(environment)) {
    EXPECT_FALSE(field.value.empty()) << field.label << " is not read from a full fingerprint";
    if (!field.counts_for_platform) not_platform.insert(field.label);
  }
  EXPECT_EQ(not_platform, (std::set<std::string>{"OS", "tool", "logical CPUs", "GPU memory", "fingerprint",
                                                 "CUDA compiled runtime", "CUDA unavailable", "NVML",
                                                 "NVML unavailable", "Python", "Python torch path", "Python xxhash"}));
}

TEST(Platform, FlagsDifferAsSetsAndCapabilityAsValues) {
  auto before = gpu_host(), after = gpu_host();
  before["cpu_flags"] = {"avx", "avx2", "avx512bw", "avx512f", "fma"};
  after["cpu_flags"] = {"amx_tile", "avx", "avx2", "fma"};
  after["aten_cpu_capability"] = "AVX2";
  const auto changes = environment_changes(before, after);
  ASSERT_EQ(labels_of(changes), (std::vector<std::string>{"CPU flags", "ATen capability"}));
  EXPECT_EQ(changes[0].difference, "-avx512bw -avx512f +amx_tile");
  EXPECT_EQ(changes[0].removed, (std::vector<std::string>{"avx512bw", "avx512f"}));
  EXPECT_EQ(changes[0].added, std::vector<std::string>{"amx_tile"});
  EXPECT_EQ(changes[0].before, "avx avx2 avx512bw avx512f fma");
  EXPECT_EQ(change_sides(changes[0]), (std::pair<std::string, std::string>{"-avx512bw -avx512f", "+amx_tile"}));
  EXPECT_EQ(changes[1].difference, "AVX512 -> AVX2");
  EXPECT_EQ(change_sides(changes[1]), (std::pair<std::string, std::string>{"AVX512", "AVX2"}));
  // Removed and added flags keep each side's order; the same flags in another order are no change.
  after["cpu_flags"] = {"fma", "avx512f", "avx512bw", "avx2", "avx"};
  after["aten_cpu_capability"] = "AVX512";
  EXPECT_TRUE(environment_changes(before, after).empty());
  after["cpu_flags"] = {"avx", "avx2", "fma"};
  before["cpu_flags"] = {"avx512f", "avx512bw", "avx", "avx2", "fma"};
  EXPECT_EQ(environment_changes(before, after).at(0).difference, "-avx512f -avx512bw");
  // A recorded empty list is a fact, not "not recorded".
  after["cpu_flags"] = json::array();
  const auto emptied = environment_changes(before, after).at(0);
  EXPECT_FALSE(emptied.unknown);
  EXPECT_EQ(emptied.after, "none");
  EXPECT_EQ(emptied.difference, "-avx512f -avx512bw -avx -avx2 -fma");
}

TEST(Platform, TheGateSentenceNamesWhatChanged) {
  auto before = gpu_host(), after = gpu_host();
  after["cpu_flags"] = {"avx", "avx2", "f16c", "fma", "sse4_1", "sse4_2"};
  after["aten_cpu_capability"] = "AVX2";
  after["os"] = "Linux 6.12.0";
  const auto comparison = compare_environments(before, after);
  EXPECT_TRUE(comparison.platform_changed);
  EXPECT_EQ(platform_sentence(comparison),
            "Platform changed: CPU flags -amx_bf16 -amx_int8 -amx_tile -avx512bw -avx512cd -avx512dq -avx512f "
            "-avx512vl, ATen capability AVX512 -> AVX2; the changed_platform rules apply (by default DRIFT warns "
            "instead of failing).");
  // The OS is listed as a change but does not count.
  EXPECT_EQ(labels_of(comparison.environment_changes),
            (std::vector<std::string>{"CPU flags", "ATen capability", "OS"}));
  std::ostringstream out;
  const auto gate = gate_outcome(comparison, default_gate_policy());
  print_comparison(comparison, &gate, out);
  EXPECT_NE(out.str().find("\n  ATen capability  platform      AVX512 -> AVX2\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\n  OS               not platform  Linux 6.8.0-45-generic -> Linux 6.12.0\n"),
            std::string::npos)
      << out.str();
}

TEST(Platform, AnUnchangedPlatformKeepsItsSentenceAndSaysWhatElseChanged) {
  auto before = gpu_host(), after = gpu_host();
  after["os"] = "Linux 6.12.0";
  after["tool_version"] = "0.2.0";
  const auto comparison = compare_environments(before, after);
  EXPECT_FALSE(comparison.platform_changed);
  EXPECT_EQ(platform_sentence(comparison), "Platform unchanged: the unchanged_platform rules apply.");
  EXPECT_EQ(comparison.platform_summary,
            "Platform unchanged; what changed (OS, tool) changes neither bits nor kernel choice");
}

TEST(Platform, AVariableMissingFromARecordedNumericsEnvironmentIsUnset) {
  auto before = gpu_host(), after = gpu_host();
  after["numerics_environment"]["ATEN_CPU_CAPABILITY"] = "default";
  auto changes = environment_changes(before, after);
  ASSERT_EQ(labels_of(changes), std::vector<std::string>{"env ATEN_CPU_CAPABILITY"});
  EXPECT_EQ(changes[0].difference, "unset -> default");
  EXPECT_FALSE(changes[0].unknown);
  EXPECT_TRUE(changes[0].platform);
  // Listed with the other variables, before the OS, whichever side has it.
  after["numerics_environment"]["ZZZ_OTHER"] = "1";  // not a real variable: only its place matters here
  EXPECT_EQ(labels_of(environment_changes(before, after)),
            (std::vector<std::string>{"env ATEN_CPU_CAPABILITY", "env ZZZ_OTHER"}));
  after["os"] = "Linux 7";
  EXPECT_EQ(labels_of(environment_changes(after, before)),
            (std::vector<std::string>{"env ATEN_CPU_CAPABILITY", "env ZZZ_OTHER", "OS"}));
  // An old fingerprint records no numerics environment: the variable's state there is unknown.
  before.erase("numerics_environment");
  after["os"] = before["os"];
  after["numerics_environment"].erase("ZZZ_OTHER");
  changes = environment_changes(before, after);
  ASSERT_EQ(labels_of(changes), (std::vector<std::string>{"env ATEN_CPU_CAPABILITY", "env CUBLAS_WORKSPACE_CONFIG"}));
  EXPECT_TRUE(changes[0].unknown);
  EXPECT_EQ(changes[0].difference, "not recorded -> default");
}

TEST(Platform, JsonCarriesHowEachChangeCountsAndTheSummary) {
  auto before = gpu_host(), after = gpu_host();
  after["cpu_flags"] = {"avx", "avx2", "fma"};
  after["os"] = "Linux 6.12.0";
  before.erase("mkl");
  const auto comparison = compare_environments(before, after);
  const auto j = comparison_to_json(comparison, nullptr);
  EXPECT_EQ(j.at("platform_summary"), comparison.platform_summary);
  EXPECT_EQ(j.at("platform_summary").get<std::string>().rfind("Platform changed: CPU flags -amx_bf16", 0), 0u);
  EXPECT_NE(j.at("platform_summary")
                .get<std::string>()
                .find("; not recorded in base.yaml: MKL (counted as possibly changed)"),
            std::string::npos);
  EXPECT_EQ(j.at("environment").at("platform_changed"), true);
  const auto& changes = j.at("environment").at("changes");
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].at("field"), "CPU flags");
  EXPECT_EQ(changes[0].at("platform"), true);
  EXPECT_EQ(changes[0].at("unknown"), false);
  EXPECT_EQ(changes[0].at("added"), json::array());
  EXPECT_EQ(changes[0].at("removed").size(), 11u);
  EXPECT_EQ(changes[1].at("field"), "MKL");
  EXPECT_EQ(changes[1].at("unknown"), true);
  EXPECT_EQ(changes[1].at("before"), "");
  EXPECT_EQ(changes[2].at("field"), "OS");
  EXPECT_EQ(changes[2].at("platform"), false);
  EXPECT_FALSE(changes[2].contains("removed"));
}

TEST(Platform, FieldsReadVersionTwoValues) {
  std::map<std::string, std::string> values;
  for (const auto& field : fingerprint_fields(gpu_host())) values[field.label] = field.value;
  EXPECT_EQ(values["CPU id"], "GenuineIntel family 6 model 143 stepping 8");
  EXPECT_EQ(values["GPU"], "NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0)");
  EXPECT_EQ(values["GPU memory"], "79.6 GiB");
  EXPECT_EQ(values["GPU ECC"], "on");
  EXPECT_EQ(values["GPU MIG"], "off");
  EXPECT_EQ(values["CUDA driver"], "13.2");
  EXPECT_EQ(values["torch CUDA build"], "yes");
  EXPECT_EQ(values["ATen capabilities"], "default avx2 avx512");
  EXPECT_EQ(values["env CUBLAS_WORKSPACE_CONFIG"], ":4096:8");
  EXPECT_FALSE(values.count("sources")) << "where a fact came from is no fact about the machine";
}

}  // namespace
}  // namespace repro_audit
