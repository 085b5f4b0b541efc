// The workers of a CPU audit run repro-audit-cpu, the same program without libtorch's CUDA half, where
// the build made one; the report's environment still holds this machine's CUDA facts, as `env` says them
// (checked here too: the torch tests link libtorch without its CUDA half).
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using json = nlohmann::json;
using WorkerBinary = CliTest;

TEST_F(WorkerBinary, ACpuAuditsWorkersLoadNoCudaAndItsReportKeepsTheCudaFacts) {
  const fs::path cpu_binary = fs::path(test_paths::kBinary).parent_path() / "repro-audit-cpu";
  if (!fs::exists(cpu_binary)) GTEST_SKIP() << "this build's libtorch has no CUDA half: no repro-audit-cpu";
  // What each binary loads: libtorch_cuda in repro-audit, not in repro-audit-cpu.
  EXPECT_NE(shell("ldd " + std::string(test_paths::kBinary)).output.find("libtorch_cuda"), std::string::npos);
  const auto cpu_libraries = shell("ldd " + cpu_binary.string());
  EXPECT_EQ(cpu_libraries.exit_code, 0) << cpu_libraries.output;
  EXPECT_EQ(cpu_libraries.output.find("libtorch_cuda"), std::string::npos) << cpu_libraries.output;
  EXPECT_NE(cpu_libraries.output.find("libtorch_cpu"), std::string::npos) << cpu_libraries.output;

  const auto log = path("audit.jsonl"), report_path = path("report.json");
  const auto audit = run("run " + kSmallAudit + " --processes 2 --json " + report_path, "REPRO_AUDIT_AUDIT_LOG=" + log);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  const auto line = json::parse(slurp(log));
  EXPECT_EQ(line.at("worker"), cpu_binary.string());
  EXPECT_GE(line.at("workers"), 2);
  const auto report = json::parse(slurp(report_path));
  EXPECT_EQ(report.at("cells").at(0).at("verdict"), "deterministic");

  // The workers' fingerprint lacks CUDA (their process never loaded it): the audit's own fills it in.
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto here = json::parse(env.output);
  const auto& environment = report.at("environment");
  EXPECT_EQ(environment.at("torch_cuda_build"), here.at("torch_cuda_build"));
  EXPECT_EQ(here.at("torch_cuda_build"), true);
  EXPECT_EQ(environment.at("cuda"), here.at("cuda"));
  EXPECT_TRUE(here.at("cuda").contains("compiled_runtime"));
  for (const auto& [key, value] : here.at("sources").items())
    if (key.rfind("cuda", 0) == 0) EXPECT_EQ(environment.at("sources").value(key, json()), value) << key;
  for (const auto& [key, value] : environment.at("sources").items())
    if (key.rfind("cuda", 0) == 0) EXPECT_TRUE(here.at("sources").contains(key)) << key;
  EXPECT_EQ(environment.at("torch"), here.at("torch"));
}

// The CUDA facts of `env` (repro-audit links the whole of libtorch): without a GPU, why not.
TEST_F(WorkerBinary, CudaFactsSayHonestlyWhyTheyAreUnavailable) {
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto cuda = json::parse(env.output).at("cuda");
  if (cuda.value("available", false)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(cuda.value("reason", "").empty());
  EXPECT_TRUE(!cuda.contains("devices") || cuda.at("devices").empty());
  if (cuda.contains("compiled_runtime")) {
    // A CUDA build asks NVML even without a GPU: it gives the driver version or says why not.
    EXPECT_NE(cuda.contains("nvml"), cuda.contains("nvml_unavailable"));
    if (cuda.value("driver", 0) == 0) EXPECT_FALSE(cuda.contains("nvml"));
  } else {
    EXPECT_EQ(cuda.at("reason"), "built without CUDA");
  }
}

TEST_F(WorkerBinary, CudaFactsRecordEachGpusMemoryAndModes) {
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto cuda = json::parse(env.output).at("cuda");
  if (!cuda.value("available", false)) GTEST_SKIP() << "no GPU: " << cuda.value("reason", "");
  ASSERT_FALSE(cuda.at("devices").empty());
  for (const auto& device : cuda.at("devices")) {
    EXPECT_GT(device.at("memory_bytes").get<std::uint64_t>(), 0u);
    EXPECT_GT(device.at("sm_count").get<int>(), 0);
    EXPECT_NE(device.at("compute_capability").get<std::string>().find('.'), std::string::npos);
    if (cuda.contains("nvml")) EXPECT_TRUE(device.contains("mig") || device.contains("ecc"));
  }
  EXPECT_TRUE(cuda.contains("cublas"));
}

}  // namespace
