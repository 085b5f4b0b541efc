// Tests whose verdicts rest on timings: CTest runs them alone (RUN_SERIAL), never beside another
// test's load, which would be a cost the timer rightly sees. `selftest` (its timed control) is one;
// its Python twins (`--python-only`) need no quiet machine and are checked in repro_test.cc.
#include <nlohmann/json.hpp>
#include <cmath>
#include <iostream>
#include <sstream>

#include "cli_tools.h"
#include "common/pattern.h"

namespace {

using namespace testing_cli;
using nlohmann::json;
using repro_audit::Pattern;

class Timing : public CliTest {};

const json& cell_of(const json& report, const std::string& key) {
  for (const auto& cell : report.at("cells"))
    if (cell.at("key") == key) return cell;
  throw std::runtime_error("no cell " + key);
}

// What the timings of the control's audit should show, or what they show instead ("" when they hold):
// the 1.3x variant a cost whose interval excludes 1, the 1.0x variant no measurable cost.
std::string cost_problems(const std::string& output, const json& report) {
  std::string problems;
  if (!Pattern(R"(control\.timed_cost/cost-1\.3x +\S+ +\S+ 1\.[234]x)").found_in(output))
    problems += "no 1.2-1.4x cost printed for cost-1.3x\n";
  if (!Pattern(R"(control\.timed_cost/cost-1\.0x +\S+ +\S+ ~1\.0x)").found_in(output))
    problems += "no ~1.0x printed for cost-1.0x\n";
  const auto& costly = cell_of(report, "control.timed_cost/cost-1.3x@cpu|deterministic_algorithms=on,threads=1");
  const auto interval = costly.at("cost_ratio_interval").get<std::vector<double>>();
  const auto ratio = costly.at("cost_ratio").get<double>();
  if (interval.at(0) <= 1.0 || std::abs(ratio - 1.3) > 0.15)
    problems +=
        "cost-1.3x: " + costly.at("cost_ratio").dump() + " in " + costly.at("cost_ratio_interval").dump() + "\n";
  const auto& even = cell_of(report, "control.timed_cost/cost-1.0x@cpu|deterministic_algorithms=on,threads=1");
  const auto even_interval = even.at("cost_ratio_interval").get<std::vector<double>>();
  if (even_interval.at(0) > 1.0 || even_interval.at(1) < 1.0)
    problems += "cost-1.0x: interval " + even.at("cost_ratio_interval").dump() + " excludes 1\n";
  return problems;
}

// The timing control does 1.3x the work under strict in one variant and the same work in the other:
// the first is a cost whose interval excludes 1, the second no measurable cost, shown as ~1.0x. A load
// that lands on one cell's timings and not the other's (another job on the machine) is a cost the timer
// rightly sees: the audit is run a second time before the timings are called wrong, and both attempts'
// findings are printed. A timing feature that is broken fails both.
TEST_F(Timing, TheControlsCostIsSeenAndItsAbsenceIsNot) {
  const auto report_path = path("report.json");
  std::string problems, output;
  json report;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const auto result =
        run("run --device cpu --probe control.timed_cost --profile default --profile strict "
            "--axis threads=1 --repeats 10 --json " +
            report_path);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    output = result.output;
    report = json::parse(slurp(report_path));
    const auto found = cost_problems(output, report);
    if (found.empty()) break;
    problems += "attempt " + std::to_string(attempt) + ":\n" + found;
    if (attempt == 2) ADD_FAILURE() << problems << output;
  }
  if (!problems.empty()) std::cout << "timings off in a first attempt:\n" << problems;
  const auto& costly = cell_of(report, "control.timed_cost/cost-1.3x@cpu|deterministic_algorithms=on,threads=1");
  EXPECT_TRUE(costly.at("timing").contains("ci_low_ns"));
  // The default column is the reference: no ratio against itself.
  EXPECT_FALSE(cell_of(report, "control.timed_cost/cost-1.3x@cpu|threads=1").contains("cost_ratio"));
  // Timed in the default three rounds: the first process's observation holds them all.
  for (const auto& cell : report.at("cells"))
    EXPECT_EQ(cell.at("observations").at(0).value("timing_rounds", 1), 3) << cell.at("key");
  // The same bits under both profiles: the extra work changes the time, not the output.
  EXPECT_EQ(costly.at("digest"), cell_of(report, "control.timed_cost/cost-1.3x@cpu|threads=1").at("digest"));
}

TEST_F(Timing, SelftestCatchesTheRacyControlEveryFaultControlTheTimedCostAndMeasuresItsPower) {
  const auto result = run("selftest --device cpu");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("selftest passed"), std::string::npos);
  // Every accumulating variant measured and sensitive; the rare divergence caught often enough.
  EXPECT_NE(result.output.find("Order sensitivity:"), std::string::npos) << result.output;
  EXPECT_TRUE(Pattern(R"(index_add/f32 +sensitive +\d)").found_in(result.output)) << result.output;
  // Insensitive only where the variant says why (fractional_max3d-f32: windows that never overlap).
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("INSENSITIVE") != std::string::npos) EXPECT_NE(line.find("by design: "), std::string::npos) << line;
  EXPECT_TRUE(Pattern(R"(Statistical power: control\.rare_divergence/p0\.1 .* in 20 cells of 30 )"
                      R"(runs .*: (1[5-9]|20) caught; .*: passed)")
                  .found_in(result.output))
      << result.output;
  EXPECT_TRUE(Pattern("control\\.racy_accumulate/f32 +strict threads=2 +nondeterministic +nondeterministic *\n")
                  .found_in(result.output))
      << result.output;
  for (const auto* line :
       {R"(control\.segfault/default +default threads=2 +crashed +crashed)",
        R"(control\.abort/default +default threads=2 +crashed +crashed)",
        R"(control\.hang/default +default threads=2 +timeout +timeout)",
        R"(control\.throw/default +default threads=2 +error +error)",
        R"(control\.alloc_storm/default +default threads=2 +error +error)",
        R"(control\.ordered_accumulate/f32 +strict threads=2 +deterministic +deterministic)",
        R"(control\.batch_variant_row_sum/f32 +default threads=2 +varies +varies)",
        R"(control\.batch_invariant_row_sum/f32 +default threads=2 +invariant +invariant)",
        R"(control\.timed_cost/cost-1\.3x +strict threads=2 +deterministic +deterministic +cost 1\.)",
        R"(control\.timed_cost/cost-1\.0x +strict threads=2 +deterministic +deterministic +cost ~1\.0x)"})
    EXPECT_TRUE(Pattern(line).found_in(result.output)) << line << "\n" << result.output;
  // Invariance controls are documented deterministic on the CPU: strict would repeat their default column.
  EXPECT_FALSE(Pattern(R"(control\.batch_\w+_row_sum/f32 +strict)").found_in(result.output)) << result.output;
}

}  // namespace
