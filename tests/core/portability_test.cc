#include "report/portability.h"

#include <gtest/gtest.h>

#include <functional>

#include "hash/digest.h"
#include "report/json_io.h"
#include "report/report.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

// What each process of a cell saw: one output name per run; equal names give equal digests.
using Runs = std::vector<std::vector<std::string>>;

ProcessObservation process_runs(int process, const std::vector<std::string>& names) {
  ProcessObservation observation;
  observation.process = process;
  for (const auto& name : names) {
    const auto digest = digest_text(name);
    observation.runs.push_back({digest, {{"output", digest}}, false, 100, ""});
  }
  return observation;
}

// `sum` swept over `axes` (full matrix), each cell observed as `observe` says.
Report audited(const std::map<std::string, std::vector<std::string>>& axes,
               const std::function<Runs(const Cell&)>& observe) {
  Config config;
  config.probes = {{"sum", {"f32"}}};
  config.full_matrix = true;
  config.axes = axes;
  const auto plan = make_plan(config, testing::test_catalogue(), "cpu");
  std::map<std::string, std::vector<ProcessObservation>> observations;
  for (const auto& cell : plan.cells) {
    const auto runs = observe(cell);
    for (std::size_t process = 0; process < runs.size(); ++process)
      observations[cell.key].push_back(process_runs(static_cast<int>(process), runs[process]));
  }
  return build_report(plan, observations, testing::test_catalogue());
}

Runs same(const std::string& name) { return {{name, name}, {name, name}}; }

const Portability& only_entry(const Report& report) {
  EXPECT_EQ(report.portability.size(), 1u);
  return report.portability.at(0);
}

TEST(Portability, RunsThatDisagreeInOneProcessAreNondeterministic) {
  const auto report = audited({{"threads", {"1", "2"}}}, [](const Cell& cell) {
    return cell.settings.at("threads") == "2" ? Runs{{"a", "b"}, {"a", "a"}} : same("a");
  });
  const auto& entry = only_entry(report);
  EXPECT_EQ(entry.level, PortabilityLevel::nondeterministic);
  EXPECT_NE(entry.limit.find("runs in one process disagree"), std::string::npos) << entry.limit;
}

TEST(Portability, ProcessesThatDisagreeAreRunToRun) {
  const auto report = audited({{"threads", {"1", "2"}}}, [](const Cell&) { return Runs{{"a", "a"}, {"b", "b"}}; });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::run_to_run);
  EXPECT_NE(only_entry(report).limit.find("processes disagree"), std::string::npos);
}

TEST(Portability, OneProcessCannotClaimCrossProcess) {
  const auto report = audited({{"threads", {"1", "2"}}}, [](const Cell&) { return Runs{{"a", "a", "a"}}; });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::run_to_run);
  EXPECT_NE(only_entry(report).limit.find("one process"), std::string::npos);
}

TEST(Portability, ThreadCountsThatChangeTheBitsStopAtCrossProcess) {
  const auto report =
      audited({{"threads", {"1", "2"}}}, [](const Cell& cell) { return same("sum" + cell.settings.at("threads")); });
  const auto& entry = only_entry(report);
  EXPECT_EQ(entry.level, PortabilityLevel::cross_process);
  EXPECT_EQ(entry.limit, "threads=1 vs threads=2 give different bits");
}

TEST(Portability, OneThreadCountMeasuredIsNotThreadCountInvariance) {
  const auto report = audited({{"threads", {"2"}}}, [](const Cell&) { return same("a"); });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::cross_process);
  EXPECT_EQ(only_entry(report).limit, "one thread count measured");
}

TEST(Portability, OneCapabilityMeasuredStopsAtThreadCountInvariant) {
  const auto report = audited({{"threads", {"1", "2"}}}, [](const Cell&) { return same("a"); });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::thread_count_invariant);
  EXPECT_NE(only_entry(report).limit.find("one CPU capability measured"), std::string::npos);
}

TEST(Portability, ACapabilityThatChangesTheBitsIsNamed) {
  const auto report = audited(
      {{"threads", {"1", "2"}}, {"cpu_capability", {"native", "default"}}},
      [](const Cell& cell) { return same(cell.settings.at("cpu_capability") == "default" ? "generic" : "avx"); });
  const auto& entry = only_entry(report);
  EXPECT_EQ(entry.level, PortabilityLevel::thread_count_invariant);
  EXPECT_NE(entry.limit.find("cpu_capability=native"), std::string::npos) << entry.limit;
  EXPECT_NE(entry.limit.find("cpu_capability=default"), std::string::npos) << entry.limit;
}

TEST(Portability, SaysWhetherTheInputsAlreadyDiffered) {
  for (const bool inputs_differ : {false, true}) {
    auto report = audited({{"threads", {"1", "2"}}, {"cpu_capability", {"native", "default"}}}, [](const Cell& cell) {
      return same(cell.settings.at("cpu_capability") == "default" ? "generic" : "avx");
    });
    for (auto& cell : report.cells)
      for (auto& observation : cell.observations)
        observation.input_digest = inputs_differ ? cell.cell.settings.at("cpu_capability") : "same";
    const auto entries = find_portability(report.cells);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_NE(entries[0].limit.find(inputs_differ ? "the seeded inputs already differ" : "(same inputs)"),
              std::string::npos)
        << entries[0].limit;
  }
}

TEST(Portability, TheSameBitsUnderEveryCapabilityAndBranchAreIsaInvariant) {
  const auto report = audited(
      {{"threads", {"1", "2"}}, {"cpu_capability", {"native", "default"}}, {"mkl_cbwr", {"unset", "COMPATIBLE"}}},
      [](const Cell&) { return same("a"); });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::isa_invariant);
  EXPECT_EQ(only_entry(report).limit, "");
}

TEST(Portability, AnMklBranchThatChangesTheBitsBreaksIsaInvariance) {
  const auto report = audited({{"threads", {"1", "2"}}, {"mkl_cbwr", {"unset", "COMPATIBLE"}}},
                              [](const Cell& cell) { return same(cell.settings.at("mkl_cbwr")); });
  EXPECT_EQ(only_entry(report).level, PortabilityLevel::thread_count_invariant);
  EXPECT_NE(only_entry(report).limit.find("mkl_cbwr=COMPATIBLE"), std::string::npos);
}

TEST(Portability, EachSetOfInProcessSettingsHasItsOwnLevelAndTheRowShowsTheDefaults) {
  const auto report =
      audited({{"threads", {"1", "2"}}, {"deterministic_algorithms", {"off", "on"}}}, [](const Cell& cell) {
        if (cell.settings.at("deterministic_algorithms") == "on") return same("a");
        return Runs{{"a", "b"}, {"a", "a"}};
      });
  ASSERT_EQ(report.portability.size(), 2u);
  const auto rows = row_portability(report.portability);
  ASSERT_TRUE(rows.count("sum/f32"));
  const auto* row = rows.at("sum/f32");
  EXPECT_TRUE(row->defaults);
  EXPECT_EQ(row->level, PortabilityLevel::nondeterministic);
  for (const auto& entry : report.portability)
    if (!entry.defaults) {
      EXPECT_EQ(entry.settings, "deterministic_algorithms=on");
      EXPECT_EQ(entry.level, PortabilityLevel::thread_count_invariant);
    }
}

TEST(Portability, CellsWithoutDigestsSayNothing) {
  const auto report = audited({{"threads", {"1", "2"}}}, [](const Cell&) { return Runs{}; });
  EXPECT_TRUE(report.portability.empty());
}

TEST(Portability, LevelsAreWrittenAndRecomputedOnLoad) {
  const auto report =
      audited({{"threads", {"1", "2"}}}, [](const Cell& cell) { return same("sum" + cell.settings.at("threads")); });
  const auto j = report_to_json(report);
  ASSERT_EQ(j.at("portability").size(), 1u);
  EXPECT_EQ(j.at("portability")[0].at("level"), "cross-process");
  const auto loaded = report_from_json(j, "report.json");
  ASSERT_EQ(loaded.portability.size(), 1u);
  EXPECT_EQ(loaded.portability[0].level, PortabilityLevel::cross_process);
  for (const auto& [level, name] : {std::pair{PortabilityLevel::run_to_run, "run-to-run"},
                                    std::pair{PortabilityLevel::isa_invariant, "isa-invariant"}}) {
    EXPECT_STREQ(to_string(level), name);
    EXPECT_EQ(portability_level_from_string(name), level);
  }
}

TEST(PortabilityAxes, NativeAndEveryLevelBelowTheBest) {
  const auto axes = portability_axes({"default", "avx2", "avx512"}, {"1", "2"});
  EXPECT_EQ(axes.at("cpu_capability"), (std::vector<std::string>{"native", "avx2", "default"}));
  EXPECT_EQ(axes.at("mkl_cbwr"), (std::vector<std::string>{"unset", "COMPATIBLE"}));
  EXPECT_EQ(axes.at("threads"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(portability_axes({"default", "avx2"}, {"1"}).at("cpu_capability"),
            (std::vector<std::string>{"native", "default"}));
  EXPECT_EQ(portability_axes({}, {"1"}).at("cpu_capability"), (std::vector<std::string>{"native", "default"}));
}

}  // namespace
}  // namespace repro_audit
