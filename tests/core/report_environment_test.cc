#include "audit/report_environment.h"

#include <gtest/gtest.h>

namespace repro_audit {
namespace {

using nlohmann::json;

const json kHere = {
    {"torch", "2.14.1"},
    {"threads", 8},
    {"torch_cuda_build", true},
    {"cuda", {{"compiled_runtime", 13000}, {"available", false}}},
    {"sources", {{"torch", "here"}, {"cuda", "the CUDA runtime"}, {"cuda.available", "cudaGetDeviceCount()"}}}};
const json kWorker = {{"torch", "2.14.1"},
                      {"threads", 1},
                      {"torch_cuda_build", false},
                      {"cuda", {{"available", false}, {"reason", "built without CUDA"}}},
                      {"sources", {{"torch", "worker"}, {"cuda", "this build"}, {"cuda.reason", "this build"}}}};

TEST(ReportEnvironment, AWorkerWithoutCudaKeepsItsOwnFactsAndTakesTheCudaOnesFromHere) {
  const auto environment = report_environment(kWorker, true, json(), [] { return kHere; });
  EXPECT_EQ(environment.at("threads"), 1);
  EXPECT_EQ(environment.at("torch_cuda_build"), true);
  EXPECT_EQ(environment.at("cuda"), kHere.at("cuda"));
  EXPECT_EQ(environment.at("sources"),
            (json{{"torch", "worker"}, {"cuda", "the CUDA runtime"}, {"cuda.available", "cudaGetDeviceCount()"}}));
}

TEST(ReportEnvironment, AWholeWorkerIsTakenAsItIsAndNoWorkerMeansHere) {
  int asked = 0;
  const auto here = [&] {
    ++asked;
    return kHere;
  };
  EXPECT_EQ(report_environment(kWorker, false, json(), here), kWorker);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(report_environment(json(), true, json(), here), kHere);
  EXPECT_EQ(asked, 1);
}

TEST(ReportEnvironment, TheInterpretersFactsAreAddedWithTheirSources) {
  const json interpreter = {{"python", "/usr/bin/python3"},
                            {"python_torch", "2.11.0"},
                            {"python_torch_path", 7},
                            {"sources", {{"python", "sys.executable"}}}};
  const auto environment = report_environment(kWorker, false, interpreter, [] { return kHere; });
  EXPECT_EQ(environment.at("python"), "/usr/bin/python3");
  EXPECT_EQ(environment.at("python_torch"), "2.11.0");
  EXPECT_FALSE(environment.contains("python_torch_path"));  // not text: not taken
  EXPECT_EQ(environment.at("sources").at("python"), "sys.executable");
}

}  // namespace
}  // namespace repro_audit
