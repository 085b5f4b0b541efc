#include "fingerprint/fingerprint.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fingerprint/build_info.h"
#include "fingerprint/cpu_info.h"
#include "fingerprint/fingerprint_text.h"
#include "fingerprint/gpu_facts.h"
#include "fingerprint/numerics_environment.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

// A Zen 3 host: AVX2 and FMA, no AVX-512. Two processors: only the first is read.
constexpr const char* kAmdAvx2 = R"(processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 17
model name	: AMD EPYC 7763 64-Core Processor
stepping	: 1
flags		: fpu vme sse sse2 ht pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand bmi1 avx2 bmi2 erms sha_ni vaes vpclmulqdq
bogomips	: 4890.85

processor	: 1
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 17
model name	: AMD EPYC 7763 64-Core Processor
stepping	: 1
flags		: fpu avx512f avx512bw
)";

// A Sapphire Rapids host: AVX-512 with FP16 and BF16, AMX.
constexpr const char* kIntelAmx = R"(processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
stepping	: 8
flags		: fpu sse sse2 ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vbmi2 gfni avx512_vnni avx512_bitalg avx512_vpopcntdq avx_vnni amx_bf16 avx512_fp16 amx_tile amx_int8
)";

// A Neoverse V1 host (Graviton 3): ARM's field names, hexadecimal part number, no model name.
constexpr const char* kArmSve = R"(processor	: 0
BogoMIPS	: 2100.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid sve sve2 i8mm bf16 rng
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0xd40
CPU revision	: 1
)";

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(test_paths::kFixtureDir) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CpuInfo, AmdHostWithoutAvx512) {
  const auto cpu = parse_cpu_info(kAmdAvx2);
  EXPECT_EQ(cpu.vendor, "AuthenticAMD");
  EXPECT_EQ(cpu.model_name, "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(cpu.family, 25);
  EXPECT_EQ(cpu.model, 17);
  EXPECT_EQ(cpu.stepping, 1);
  EXPECT_FALSE(cpu.arm);
  // Sorted, only the listed flags, none from the second processor.
  EXPECT_EQ(cpu.flags, (Strings{"avx", "avx2", "f16c", "fma", "sse4_1", "sse4_2"}));
  EXPECT_EQ(runnable_cpu_capabilities(cpu.flags), (Strings{"default", "avx2"}));
}

TEST(CpuInfo, IntelHostWithAmx) {
  const auto cpu = parse_cpu_info(kIntelAmx);
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  EXPECT_EQ(cpu.family, 6);
  EXPECT_EQ(cpu.model, 143);
  EXPECT_EQ(cpu.stepping, 8);
  EXPECT_EQ(cpu.flags, (Strings{"amx_bf16",
                                "amx_int8",
                                "amx_tile",
                                "avx",
                                "avx2",
                                "avx512_bf16",
                                "avx512_bitalg",
                                "avx512_fp16",
                                "avx512_vbmi2",
                                "avx512_vnni",
                                "avx512_vpopcntdq",
                                "avx512bw",
                                "avx512cd",
                                "avx512dq",
                                "avx512f",
                                "avx512ifma",
                                "avx512vbmi",
                                "avx512vl",
                                "avx_vnni",
                                "f16c",
                                "fma",
                                "sse4_1",
                                "sse4_2"}));
  EXPECT_EQ(runnable_cpu_capabilities(cpu.flags), (Strings{"default", "avx2", "avx512"}));
}

TEST(CpuInfo, ArmHostReadsArmFieldsAndRunsDefaultOnly) {
  const auto cpu = parse_cpu_info(kArmSve);
  EXPECT_TRUE(cpu.arm);
  EXPECT_EQ(cpu.vendor, "0x41");
  EXPECT_EQ(cpu.model_name, "");
  EXPECT_EQ(cpu.family, 8);
  EXPECT_EQ(cpu.model, 0xd40);
  EXPECT_EQ(cpu.stepping, 1);
  EXPECT_EQ(cpu.flags, (Strings{"asimd", "bf16", "i8mm", "sve", "sve2"}));
  EXPECT_EQ(runnable_cpu_capabilities(cpu.flags), (Strings{"default"}));
}

TEST(CpuInfo, CapabilitiesFollowAtensRule) {
  EXPECT_EQ(runnable_cpu_capabilities({}), (Strings{"default"}));
  EXPECT_EQ(runnable_cpu_capabilities({"avx2"}), (Strings{"default"}));  // AVX2 kernels also need FMA
  EXPECT_EQ(runnable_cpu_capabilities({"avx2", "fma", "avx512f", "avx512vl", "avx512bw"}),
            (Strings{"default", "avx2"}));  // no avx512dq
  EXPECT_EQ(parse_cpu_info("").flags, Strings{});
  EXPECT_EQ(parse_cpu_info("").family, std::nullopt);
}

TEST(CpuInfo, CapabilityNamesAsAtenTakesThem) {
  EXPECT_EQ(aten_capability_name("NO AVX"), "DEFAULT");
  EXPECT_EQ(aten_capability_name("AVX2"), "AVX2");
  EXPECT_EQ(aten_capability_name("AVX512"), "AVX512");
  EXPECT_EQ(aten_capability_name("Z VECTOR"), "ZVECTOR");
  EXPECT_EQ(aten_capability_name("DEFAULT"), "DEFAULT");
}

TEST(BuildInfo, ReadsTheRealShowConfigText) {
  const auto text = fixture("show_config-torch-2.14.1-cu130.txt");
  ASSERT_FALSE(text.empty());
  const auto build = parse_build_info(text);
  EXPECT_EQ(build.blas, "mkl");
  EXPECT_EQ(build.mkl, "2024.2-Product Build 20240605");
  EXPECT_EQ(build.onednn, "3.12.0 (80afa71049cd)");
  EXPECT_EQ(build.openmp, "201511");
  EXPECT_EQ(build.torch_git, "5c4886908584029761b579af026dcfb627c84070");
  EXPECT_EQ(build.cpu_capability, "AVX512");
  EXPECT_EQ(build.build_settings.at("TORCH_VERSION"), "2.14.1");
  EXPECT_EQ(build.build_settings.at("USE_XPU"), "OFF");  // the last setting, before the trailing ", "
  // Values holding ", " or "," stay whole.
  EXPECT_NE(build.build_settings.at("CUDA_FLAGS").find("--diag_suppress=bad_friend_decl"), std::string::npos);
  EXPECT_EQ(build.build_settings.count("--diag_suppress"), 0u);
}

TEST(BuildInfo, BuildWithoutMklOrOnednn) {
  const auto build = parse_build_info(
      "PyTorch built with:\n  - GCC 11.2\n  - OpenMP 201511 (a.k.a. OpenMP 4.5)\n  - CPU capability usage: NO AVX\n"
      "  - Build settings: BLAS_INFO=open, COMMIT_SHA=abc123, USE_MKL=OFF, \n");
  EXPECT_EQ(build.blas, "open");
  EXPECT_EQ(build.mkl, "");
  EXPECT_EQ(build.onednn, "");
  EXPECT_EQ(build.openmp, "201511");
  EXPECT_EQ(build.torch_git, "abc123");
  EXPECT_EQ(aten_capability_name(build.cpu_capability), "DEFAULT");
}

TEST(NumericsEnvironment, KeepsOnlyWhatChangesNumerics) {
  const char* envp[] = {"ATEN_CPU_CAPABILITY=avx2", "CUBLAS_WORKSPACE_CONFIG=:4096:8", "ONEDNN_MAX_CPU_ISA=AVX2",
                        "DNNL_DEFAULT_FPMATH_MODE=BF16", "KMP_AFFINITY=compact", "NCCL_ALGO=Ring",
                        "MKL_CBWR=COMPATIBLE", "OMP_NUM_THREADS=1", "TORCH_BLAS_PREFER_CUBLASLT=1",
                        "EMPTY_VALUE_IS_KEPT_ONLY_WHEN_LISTED=", "NVIDIA_TF32_OVERRIDE=",
                        // not numerics: logging, device choice, unrelated
                        "ONEDNN_VERBOSE=1", "ONEDNN_VERBOSE_TIMESTAMP=1", "DNNL_VERBOSE=1", "MKL_VERBOSE=1",
                        "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=ALL", "CUDA_VISIBLE_DEVICES=0",
                        "TORCH_SHOW_CPP_STACKTRACES=1", "PATH=/usr/bin", "NOT_AN_ASSIGNMENT", nullptr};
  const auto environment = environment_variables(envp);
  EXPECT_EQ(environment.at("PATH"), "/usr/bin");
  EXPECT_EQ(environment.count("NOT_AN_ASSIGNMENT"), 0u);
  const EnvironmentVariables expected = {{"ATEN_CPU_CAPABILITY", "avx2"},      {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"},
                                         {"DNNL_DEFAULT_FPMATH_MODE", "BF16"}, {"KMP_AFFINITY", "compact"},
                                         {"MKL_CBWR", "COMPATIBLE"},           {"NCCL_ALGO", "Ring"},
                                         {"NVIDIA_TF32_OVERRIDE", ""},         {"OMP_NUM_THREADS", "1"},
                                         {"ONEDNN_MAX_CPU_ISA", "AVX2"},       {"TORCH_BLAS_PREFER_CUBLASLT", "1"}};
  EXPECT_EQ(numerics_environment(environment), expected);
  EXPECT_TRUE(environment_variables(nullptr).empty());
}

// Two GPUs seen through NVML: the first with ECC on and MIG off, the second reports no ECC mode
// (not supported) and MIG on.
GpuFacts two_gpus() {
  GpuFacts facts;
  facts.compiled_runtime = 13000;
  facts.runtime = 13000;
  facts.driver = 13020;
  facts.available = true;
  facts.cudnn = 92400;
  facts.cublas = "13.0.2";
  facts.cublas_library = "/opt/nvidia/cu13/lib/libcublas.so.13";
  facts.nccl = nccl_version_text(22703);
  facts.devices = {{"NVIDIA H100 80GB HBM3", 132, 9, 0, 85'520'809'984ULL, true, false},
                   {"NVIDIA A100-SXM4-40GB", 108, 8, 0, 42'505'207'808ULL, std::nullopt, true}};
  facts.nvml_driver = "580.95.05";
  return facts;
}

TEST(GpuFacts, TwoGpusWithMigAndEcc) {
  const auto cuda = gpu_facts_json(two_gpus());
  EXPECT_EQ(cuda.at("compiled_runtime"), 13000);
  EXPECT_EQ(cuda.at("driver"), 13020);
  EXPECT_EQ(cuda.at("available"), true);
  EXPECT_FALSE(cuda.contains("reason"));
  EXPECT_EQ(cuda.at("cudnn"), 92400);
  EXPECT_EQ(cuda.at("cublas"), "13.0.2");
  EXPECT_EQ(cuda.at("nccl"), "2.27.3");
  EXPECT_EQ(cuda.at("nvml"), "580.95.05");
  EXPECT_FALSE(cuda.contains("nvml_unavailable"));
  ASSERT_EQ(cuda.at("devices").size(), 2u);
  const json first = {{"name", "NVIDIA H100 80GB HBM3"},   {"sm_count", 132}, {"compute_capability", "9.0"},
                      {"memory_bytes", 85'520'809'984ULL}, {"ecc", true},     {"mig", false}};
  EXPECT_EQ(cuda["devices"][0], first);
  EXPECT_FALSE(cuda["devices"][1].contains("ecc"));
  EXPECT_EQ(cuda["devices"][1].at("mig"), true);
  EXPECT_EQ(cuda["devices"][1].at("compute_capability"), "8.0");

  json sources = json::object();
  add_gpu_sources(two_gpus(), sources);
  for (const auto& [key, value] : cuda.items()) EXPECT_TRUE(sources.contains("cuda." + key)) << key;
  EXPECT_NE(sources.at("cuda.cublas").get<std::string>().find("/opt/nvidia/cu13/lib/libcublas.so.13"),
            std::string::npos);
}

TEST(GpuFacts, NoDriverAndNoNvml) {
  GpuFacts facts;
  facts.compiled_runtime = 13000;
  facts.runtime = 13000;
  facts.driver = 0;
  facts.reason = "CUDA driver version is insufficient for CUDA runtime version";
  facts.nvml_unavailable = "libnvidia-ml.so.1: cannot open shared object file: No such file or directory";
  const auto cuda = gpu_facts_json(facts);
  EXPECT_EQ(cuda.at("available"), false);
  EXPECT_EQ(cuda.at("driver"), 0);
  EXPECT_EQ(cuda.at("reason"), facts.reason);
  EXPECT_FALSE(cuda.contains("devices"));
  EXPECT_FALSE(cuda.contains("nvml"));
  EXPECT_EQ(cuda.at("nvml_unavailable"), facts.nvml_unavailable);
}

TEST(GpuFacts, BuiltWithoutCudaKeepsTheOldObject) {
  GpuFacts facts;
  facts.reason = "built without CUDA";
  EXPECT_EQ(gpu_facts_json(facts), (json{{"available", false}, {"reason", "built without CUDA"}}));
}

TEST(GpuFacts, NcclVersionCodes) {
  EXPECT_EQ(nccl_version_text(22703), "2.27.3");
  EXPECT_EQ(nccl_version_text(2804), "2.8.4");
  EXPECT_EQ(nccl_version_text(21005), "2.10.5");
}

FingerprintInputs fake_inputs() {
  FingerprintInputs inputs;
  inputs.tool_version = "0.1.0";
  inputs.torch_version = "2.14.1";
  inputs.torch_cuda_build = true;
  inputs.cpuinfo = kAmdAvx2;
  inputs.show_config = fixture("show_config-torch-2.14.1-cu130.txt");
  inputs.cpu_capability = "AVX2";
  inputs.logical_cpus = 64;
  inputs.threads = 32;
  inputs.interop_threads = 32;
  inputs.environment = {{"ATEN_CPU_CAPABILITY", "avx2"}, {"HOME", "/root"}, {"ONEDNN_VERBOSE", "1"}};
  inputs.os = "Linux 6.8.0";
  inputs.machine = "x86_64";
  inputs.gpu = two_gpus();
  return inputs;
}

TEST(Fingerprint, EveryKeyOfTheFormatWithItsSource) {
  const auto fingerprint = build_fingerprint(fake_inputs());
  const Strings keys = {"tool_version",
                        "torch",
                        "torch_cuda_build",
                        "cpu",
                        "logical_cpus",
                        "threads",
                        "os",
                        "machine",
                        "cuda",
                        "fingerprint",
                        "torch_git",
                        "cpu_vendor",
                        "cpu_family",
                        "cpu_model",
                        "cpu_stepping",
                        "cpu_flags",
                        "aten_cpu_capability",
                        "aten_cpu_capabilities",
                        "blas",
                        "mkl",
                        "onednn",
                        "openmp",
                        "interop_threads",
                        "numerics_environment"};
  const auto& sources = fingerprint.at("sources");
  for (const auto& key : keys) {
    EXPECT_TRUE(fingerprint.contains(key)) << key;
    ASSERT_TRUE(sources.contains(key)) << key;
    EXPECT_FALSE(sources[key].get<std::string>().empty()) << key;
  }
  for (const auto& [key, value] : fingerprint.items())  // nothing unlisted, nothing without a source
    if (key != "sources") EXPECT_TRUE(std::find(keys.begin(), keys.end(), key) != keys.end()) << key;
  for (const auto& key :
       {"compiled_runtime", "runtime", "driver", "available", "cudnn", "cublas", "nccl", "devices", "nvml"}) {
    EXPECT_TRUE(fingerprint["cuda"].contains(key)) << key;
    EXPECT_TRUE(sources.contains(std::string("cuda.") + key)) << key;
  }
  EXPECT_EQ(sources.size(), keys.size() + fingerprint["cuda"].size());

  EXPECT_EQ(fingerprint.at("fingerprint"), 2);
  EXPECT_EQ(fingerprint.at("cpu"), "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(fingerprint.at("cpu_vendor"), "AuthenticAMD");
  EXPECT_EQ(fingerprint.at("cpu_family"), 25);
  EXPECT_EQ(fingerprint.at("cpu_model"), 17);
  EXPECT_EQ(fingerprint.at("cpu_stepping"), 1);
  EXPECT_EQ(fingerprint.at("cpu_flags"), json(Strings{"avx", "avx2", "f16c", "fma", "sse4_1", "sse4_2"}));
  EXPECT_EQ(fingerprint.at("aten_cpu_capability"), "AVX2");
  EXPECT_EQ(fingerprint.at("aten_cpu_capabilities"), json(Strings{"default", "avx2"}));
  EXPECT_EQ(fingerprint.at("torch_git"), "5c4886908584029761b579af026dcfb627c84070");
  EXPECT_EQ(fingerprint.at("blas"), "mkl");
  EXPECT_EQ(fingerprint.at("mkl"), "2024.2-Product Build 20240605");
  EXPECT_EQ(fingerprint.at("onednn"), "3.12.0 (80afa71049cd)");
  EXPECT_EQ(fingerprint.at("openmp"), "201511");
  EXPECT_EQ(fingerprint.at("threads"), 32);
  EXPECT_EQ(fingerprint.at("interop_threads"), 32);
  EXPECT_EQ(fingerprint.at("numerics_environment"), (json{{"ATEN_CPU_CAPABILITY", "avx2"}}));
  EXPECT_EQ(fingerprint["cuda"]["devices"][1].at("mig"), true);
}

TEST(Fingerprint, UnknownFactsAreAbsentNotEmpty) {
  auto inputs = fake_inputs();
  inputs.cpuinfo = "";
  inputs.show_config = "";
  inputs.environment = {{"HOME", "/root"}};
  inputs.gpu = GpuFacts{};
  inputs.gpu.reason = "built without CUDA";
  const auto fingerprint = build_fingerprint(inputs);
  for (const auto& key : {"cpu_vendor", "cpu_family", "cpu_flags", "aten_cpu_capabilities", "mkl", "blas", "torch_git"})
    EXPECT_FALSE(fingerprint.contains(key)) << key;
  EXPECT_EQ(fingerprint.at("cpu"), "unknown");                        // old consumers always had a "cpu"
  EXPECT_EQ(fingerprint.at("numerics_environment"), json::object());  // recorded: none set
  EXPECT_EQ(fingerprint.at("cuda"), (json{{"available", false}, {"reason", "built without CUDA"}}));
  EXPECT_EQ(fingerprint["sources"].at("cuda.available"), "this build (without CUDA)");
}

TEST(FingerprintText, OneLinePerFieldWithItsSource) {
  auto inputs = fake_inputs();
  inputs.gpu.nvml_driver.reset();
  inputs.gpu.nvml_unavailable = "libnvidia-ml.so.1: cannot open shared object file";
  const auto lines = fingerprint_lines(build_fingerprint(inputs));
  const auto line = [&](const std::string& label) {
    for (const auto& candidate : lines)
      if (candidate.label == label) return candidate;
    ADD_FAILURE() << "no line " << label;
    return FingerprintLine{};
  };
  EXPECT_EQ(line("ATen capability").value, "AVX2");
  EXPECT_EQ(line("ATen capability").source.rfind("at::get_cpu_capability()", 0), 0u);
  EXPECT_EQ(line("CPU flags").value, "avx avx2 f16c fma sse4_1 sse4_2");
  EXPECT_EQ(line("env ATEN_CPU_CAPABILITY").value, "avx2");
  EXPECT_EQ(line("GPU 1").value, "NVIDIA A100-SXM4-40GB, cc 8.0, 108 SMs, 39.6 GiB, MIG on");
  EXPECT_EQ(line("GPU 0").value, "NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs, 79.6 GiB, ECC on, MIG off");
  EXPECT_EQ(line("NVML").value, "unavailable: libnvidia-ml.so.1: cannot open shared object file");
  EXPECT_EQ(line("cuBLAS").value, "13.0.2");
  EXPECT_EQ(line("torch git").source, "at::show_config() (COMMIT_SHA)");
  for (const auto& each : lines) EXPECT_FALSE(each.source.empty() || each.source == "not recorded") << each.label;

  // An old fingerprint: no sources, still every field shown.
  const auto old_lines = fingerprint_lines(json{{"torch", "2.4.0"}, {"threads", 2}, {"cuda", {{"available", false}}}});
  ASSERT_EQ(old_lines.size(), 3u);
  EXPECT_EQ(old_lines[0].label, "torch");
  EXPECT_EQ(old_lines[0].source, "not recorded");
  EXPECT_EQ(old_lines[2].label, "CUDA available");
  EXPECT_EQ(old_lines[2].value, "no");
}

}  // namespace
}  // namespace repro_audit
