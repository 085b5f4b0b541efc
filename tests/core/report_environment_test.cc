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

// The front end's CPU audits: the CPU workers' fingerprint (no CUDA facts) is the platform's, and the CUDA
// facts come from the first worker that has them (repro-audit-torch), even one that ran with other CPU
// settings; the supervisor is asked only where no worker had them.
TEST(ReportEnvironment, TheCudaFactsComeFromAWorkerThatHasThemAndHereOnlyWhereNoneHad) {
  int asked = 0;
  const auto here = [&] {
    ++asked;
    return kHere;
  };
  auto whole = kHere;
  whole["fingerprint"] = "whole";
  whole["threads"] = 2;
  whole["cuda"]["driver"] = 0;
  auto cpu_worker = kWorker;
  cpu_worker["fingerprint"] = "cpu";
  SeenEnvironment seen;
  seen.add(whole, false);  // ran with a capability changed: not the platform's, but its CUDA facts hold
  seen.add(cpu_worker, true);
  seen.add({{"python", "/usr/bin/python3"}}, true);  // an interpreter's facts
  const auto environment = seen.report(true, here);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(seen.cuda_facts_from(), "a worker");
  EXPECT_EQ(environment.at("threads"), 1);
  EXPECT_EQ(environment.at("fingerprint"), "cpu");
  EXPECT_EQ(environment.at("cuda"), whole.at("cuda"));
  EXPECT_EQ(environment.at("torch_cuda_build"), true);
  EXPECT_EQ(environment.at("python"), "/usr/bin/python3");

  SeenEnvironment only_cpu;
  only_cpu.add(cpu_worker, true);
  EXPECT_EQ(only_cpu.report(true, here).at("cuda"), kHere.at("cuda"));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(only_cpu.cuda_facts_from(), "the supervisor");

  SeenEnvironment none_inherited;  // the platform's facts are nobody's but this process's
  none_inherited.add(whole, false);
  EXPECT_EQ(none_inherited.report(true, here), kHere);
  EXPECT_EQ(asked, 2);

  SeenEnvironment whole_workers;
  whole_workers.add(whole, true);
  EXPECT_EQ(whole_workers.report(false, here), whole);
  EXPECT_EQ(whole_workers.cuda_facts_from(), "workers");
  EXPECT_EQ(asked, 2);
}

// CUDA facts kept from an earlier audit complete the CPU workers' fingerprint in place of `here`'s, but a
// worker's own come first, and where no worker spoke `here` is still taken whole.
TEST(SeenEnvironment, KeptCudaFactsCompleteTheCpuWorkersButNeverStandForTheWholeEnvironment) {
  int asked = 0;
  const auto here = [&] {
    ++asked;
    return kHere;
  };
  const json kept = {{"torch_cuda_build", true},
                     {"cuda", {{"compiled_runtime", 13000}, {"available", false}, {"driver", 0}}},
                     {"sources", {{"cuda", "kept"}}}};
  auto cpu_worker = kWorker;
  cpu_worker["fingerprint"] = "cpu";
  SeenEnvironment seen;
  seen.add(cpu_worker, true);
  const auto environment = seen.report(true, here, kept);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(seen.cuda_facts_from(), "kept");
  EXPECT_EQ(environment.at("cuda"), kept.at("cuda"));
  EXPECT_EQ(environment.at("sources").at("cuda"), "kept");
  EXPECT_EQ(environment.at("fingerprint"), "cpu");

  auto whole = kHere;
  whole["fingerprint"] = "whole";
  SeenEnvironment with_worker;
  with_worker.add(whole, false);
  with_worker.add(cpu_worker, true);
  EXPECT_EQ(with_worker.report(true, here, kept).at("cuda"), whole.at("cuda"));
  EXPECT_EQ(with_worker.cuda_facts_from(), "a worker");

  SeenEnvironment nobody;
  EXPECT_EQ(nobody.report(true, here, kept), kHere);
  EXPECT_EQ(nobody.cuda_facts_from(), "the supervisor");
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace repro_audit
