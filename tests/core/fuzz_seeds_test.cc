// The fuzzers start from seeds that are copies of the goldens, so they fuzz what the loaders read
// today; a hand copy drifts when the schema changes. tools/update-golden rewrites the seeds after the
// goldens; this test fails when one differs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "golden_file.h"
#include "common/atomic_file.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// {golden, seed in tests/fuzz/corpus/}: a loader with a fuzzer and a golden of its input.
const std::pair<const char*, const char*> kSeeds[] = {
    {"report.json", "report/golden.json"},
    {"baseline.yaml", "baseline/golden.yaml"},
};

TEST(FuzzSeeds, AreCopiesOfTheirGoldens) {
  for (const auto& [golden, seed] : kSeeds) {
    const auto expected = slurp(testing::golden_path(golden));
    ASSERT_FALSE(expected.empty()) << golden << " is missing: run tools/update-golden";
    const auto seed_path = std::string(test_paths::kFuzzCorpusDir) + "/" + seed;
    if (testing::updating_goldens()) {
      write_file_atomically(seed_path, expected);
      continue;
    }
    EXPECT_TRUE(slurp(seed_path) == expected)
        << seed_path << " differs from the golden " << golden << ": run tools/update-golden";
  }
}

}  // namespace
}  // namespace repro_audit
