// What a run keeps is bounded whatever the step does: its warnings (the first kKeptWarnings and a count
// of the rest), so the report stays small however many the step raises, and what it prints (the worker's
// log keeps 1 MiB of each stream), so its temporary folder does not fill up.
#include "python_callable.h"

namespace {

using namespace testing_cli;

class BoundedResources : public PythonCallable {};

TEST_F(BoundedResources, AStepRaising200000WarningsKeepsTheFirstFiftyAndACount) {
  const auto step = write("warns.py",
                          "import warnings, torch\n"
                          "def make(seed=0):\n"
                          "    for i in range(200000):\n"
                          "        warnings.warn(f'warning number {i}')\n"
                          "    return torch.arange(4.0)\n");
  const auto cells = audit(step +
                               ":make --device cpu --profile default --axis threads=1 --repeats 2 --processes 1 "
                               "--no-cost --per-op off",
                           0);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 1u);
  const auto& cell = cells.begin()->second;
  EXPECT_EQ(cell.at("verdict"), "deterministic") << output_;
  for (const auto& observation : cell.at("observations")) {
    const auto warnings = observation.at("warnings");
    ASSERT_EQ(warnings.size(), 51u) << warnings.dump();
    // Counted as raised, in every run of the process: at least the 199,950 distinct ones past the cap.
    const auto last = warnings.back().get<std::string>();
    EXPECT_NE(last.find(" more warning(s) not kept: a run keeps its first 50"), std::string::npos) << last;
    EXPECT_GE(std::stoll(last), 199950) << last;
  }
  EXPECT_LT(fs::file_size(path("report.json")), 100u << 10);
}

TEST_F(BoundedResources, AStepPrintingWithoutEndKeepsOneMebibyteOfEachStreamInTheLog) {
  const auto cells = audit(kBad +
                               ":prints_forever --device cpu --profile default --axis threads=1 --repeats 2 "
                               "--processes 1 --no-cost --per-op off",
                           0);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 1u);
  const auto warnings = cells.begin()->second.at("observations").at(0).at("warnings").dump();
  for (const auto& stream : {"stdout", "stderr"})
    EXPECT_NE(warnings.find(std::string("characters to ") + stream +
                            "; kept in the worker's log up to 1048576 "
                            "characters"),
              std::string::npos)
        << warnings;
}

}  // namespace
