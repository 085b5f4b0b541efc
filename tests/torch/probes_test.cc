// Every registered probe, on the CPU: runs, digests, and its verdict under strict.
#include <gtest/gtest.h>

#include "test_tools.h"

#include "config/settings.h"
#include "verdict/verdict.h"
#include "worker/probe.h"
#include "worker/settings_apply.h"
#include "worker/worker.h"

namespace repro_audit {
namespace {

struct ProbeVariant {
  std::string probe;
  std::string variant;
};

std::vector<ProbeVariant> cpu_variants() {
  std::vector<ProbeVariant> result;
  for (const auto& probe : registered_catalogue())
    if (probe.in_default_suite)
      for (const auto& variant : probe.variants) result.push_back({probe.name, variant.name});
  return result;
}

void PrintTo(const ProbeVariant& value, std::ostream* out) { *out << value.probe << "/" << value.variant; }

class EveryProbe : public ::testing::TestWithParam<ProbeVariant> {};

TEST_P(EveryProbe, GivesAVerdictOnTheCpuThatMatchesItsDocumentationUnderStrict) {
  const auto& [probe, variant] = GetParam();
  const auto catalogue = registered_catalogue();
  const auto* info = find_probe(catalogue, probe);
  Cell cell{"",
            probe,
            variant,
            "cpu",
            "strict threads=2",
            make_flag_set({{"deterministic_algorithms", "on"}, {"threads", "2"}}, "cpu"),
            ""};
  cell.key = cell_key(probe, variant, "cpu", cell.settings);
  const auto* variant_info = info->find_variant(variant);
  const bool on_cpu =
      std::find(variant_info->devices.begin(), variant_info->devices.end(), "cpu") != variant_info->devices.end();
  apply_process_settings({{"threads", "2"}});
  WorkerRequest request;
  request.repeats = 3;
  const auto observation = testing::run_untraced(cell, request);
  if (!on_cpu) {
    EXPECT_EQ(observation.status, "unsupported") << observation.message;
    return;
  }
  ASSERT_TRUE(observation.status == "ok" || observation.status == "exception") << observation.message;
  const auto verdict = judge(cell, {observation});
  if (observation.status == "ok") {
    EXPECT_EQ(observation.runs.size(), 4u);
    EXPECT_EQ(observation.runs[0].digest.size(), 32u);
    EXPECT_FALSE(observation.runs[0].outputs.empty());
  }
  const auto contradiction = find_contradiction(info->documented_on(variant, "cpu"), cell.settings, verdict);
  EXPECT_FALSE(contradiction && contradiction->breaks_audit)
      << cell.key << ": " << to_string(verdict.kind) << ": " << contradiction->text << " " << verdict.message;
}

INSTANTIATE_TEST_SUITE_P(Cpu, EveryProbe, ::testing::ValuesIn(cpu_variants()),
                         [](const ::testing::TestParamInfo<ProbeVariant>& info) {
                           std::string name = info.param.probe + "_" + info.param.variant;
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(Controls, RacyIsCaughtAndOrderedIsClean) {
  apply_process_settings({{"threads", "2"}});
  WorkerRequest request;
  request.repeats = 10;
  for (const auto* name : {"control.racy_accumulate", "control.ordered_accumulate"}) {
    Cell cell{"", name, "f32", "cpu", "", make_flag_set({{"deterministic_algorithms", "on"}}, "cpu"), ""};
    cell.key = cell_key(name, "f32", "cpu", cell.settings);
    const auto verdict = judge(cell, {testing::run_untraced(cell, request), testing::run_untraced(cell, request)});
    EXPECT_EQ(verdict.kind, std::string(name) == "control.racy_accumulate" ? VerdictKind::nondeterministic
                                                                           : VerdictKind::deterministic)
        << name;
  }
}

TEST(ProbeContext, InputsDependOnlyOnTheSeed) {
  ProbeContext a(at::kCPU, 7, "f32"), b(at::kCPU, 7, "f32"), c(at::kCPU, 8, "f32");
  const auto x = a.randn({100});
  EXPECT_TRUE(at::equal(x, b.randn({100})));
  EXPECT_FALSE(at::equal(x, c.randn({100})));
}

}  // namespace
}  // namespace repro_audit
