// The fingerprint of this machine, read through libtorch. Nothing here depends on the host's ISA:
// the facts are checked against each other and against what libtorch itself prints.
#include "worker/environment.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "fingerprint/build_info.h"
#include "fingerprint/cpu_info.h"

namespace repro_audit {
namespace {

using nlohmann::json;

// Sets a variable for one scope and puts back what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Environment, EveryFieldRecordedWithASource) {
  const auto fingerprint = environment_fingerprint();
  EXPECT_EQ(fingerprint.at("fingerprint"), 2);
  for (const auto* key : {"tool_version", "torch", "torch_cuda_build", "cpu", "logical_cpus", "threads", "os",
                          "machine", "cuda", "torch_git", "cpu_flags", "aten_cpu_capability", "aten_cpu_capabilities",
                          "blas", "openmp", "interop_threads", "numerics_environment"})
    EXPECT_TRUE(fingerprint.contains(key)) << key;
  for (const auto& [key, value] : fingerprint.items())
    if (key != "sources") EXPECT_TRUE(fingerprint.at("sources").contains(key)) << key;
  for (const auto& [key, value] : fingerprint.at("cuda").items())
    EXPECT_TRUE(fingerprint.at("sources").contains("cuda." + key)) << key;
  EXPECT_EQ(fingerprint.at("torch_git").get<std::string>().size(), 40u);
  EXPECT_EQ(fingerprint.at("threads"), at::get_num_threads());
  EXPECT_EQ(fingerprint.at("interop_threads"), at::get_num_interop_threads());
}

TEST(Environment, CapabilityInForceIsWhatShowConfigPrints) {
  const auto fingerprint = environment_fingerprint();
  const auto printed = parse_build_info(at::show_config()).cpu_capability;  // "CPU capability usage: X"
  ASSERT_FALSE(printed.empty());
  EXPECT_EQ(fingerprint.at("aten_cpu_capability"), aten_capability_name(printed));
  // Unless forced through the environment, ATen runs a capability the CPU has.
  if (std::getenv("ATEN_CPU_CAPABILITY") == nullptr) {
    std::string lower;
    for (const char c : fingerprint.at("aten_cpu_capability").get<std::string>()) lower += std::tolower(c);
    const auto runnable = fingerprint.at("aten_cpu_capabilities").get<std::vector<std::string>>();
    EXPECT_NE(std::find(runnable.begin(), runnable.end(), lower), runnable.end()) << lower;
  }
}

TEST(Environment, FlagsAgreeWithTheCapabilities) {
  const auto fingerprint = environment_fingerprint();
  const auto flags = fingerprint.at("cpu_flags").get<std::vector<std::string>>();
  const auto capabilities = fingerprint.at("aten_cpu_capabilities").get<std::vector<std::string>>();
  EXPECT_EQ(capabilities, runnable_cpu_capabilities(flags));
  EXPECT_EQ(capabilities.front(), "default");
  EXPECT_TRUE(std::is_sorted(flags.begin(), flags.end()));
  const auto has = [&](const char* flag) { return std::find(flags.begin(), flags.end(), flag) != flags.end(); };
  if (std::find(capabilities.begin(), capabilities.end(), "avx512") != capabilities.end())
    EXPECT_TRUE(has("avx512f") && has("avx512vl") && has("avx512bw") && has("avx512dq") && has("fma"));
  if (has("avx512f")) EXPECT_TRUE(has("avx2"));  // what any AVX-512 CPU also has
  if (fingerprint.at("machine") == "x86_64") EXPECT_TRUE(has("sse4_2"));
}

TEST(Environment, NumericsVariablesOfTheProcessAreRecorded) {
  // ATen reads ATEN_CPU_CAPABILITY once per process: pin that choice first, so setting the
  // variable here only exercises the environment filter and changes no kernel of later tests.
  (void)at::get_cpu_capability();
  json fingerprint;
  {
    const ScopedVariable capability("ATEN_CPU_CAPABILITY", "default");
    const ScopedVariable verbose("ONEDNN_VERBOSE", "1");
    const ScopedVariable devices("CUDA_VISIBLE_DEVICES", "0");
    fingerprint = environment_fingerprint();
  }
  const auto& recorded = fingerprint.at("numerics_environment");
  EXPECT_EQ(recorded.at("ATEN_CPU_CAPABILITY"), "default");
  EXPECT_FALSE(recorded.contains("ONEDNN_VERBOSE"));
  EXPECT_FALSE(recorded.contains("CUDA_VISIBLE_DEVICES"));
  if (std::getenv("ATEN_CPU_CAPABILITY") == nullptr)
    EXPECT_FALSE(environment_fingerprint().at("numerics_environment").contains("ATEN_CPU_CAPABILITY"));
}

}  // namespace
}  // namespace repro_audit
