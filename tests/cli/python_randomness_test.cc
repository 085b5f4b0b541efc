// The randomness half of the recipe on real code: real `random`, NumPy and torch generators in the
// examples under examples/py/randomness, audited by the real binary in two processes each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "python_callable.h"

namespace {

using namespace testing_cli;

const std::string kRandomness = std::string(test_paths::kSourceDir) + "/examples/py/randomness/";

std::string models(const std::vector<std::string>& names) {
  std::string config = "models:\n";
  for (const auto& name : names) config += "  - callable: " + kRandomness + name + ".py:make\n";
  return config;
}

std::string cell_key(const std::string& name, const std::string& settings) {
  return "py." + name + "-make/call@cpu|" + settings;
}

// The source named in the cause, as the report holds it.
std::string seeded_state_of(const nlohmann::json& cell, const std::string& source) {
  for (const auto& found : cell.value("random_sources", nlohmann::json::array()))
    if (found.at("name") == source) return found.at("seeded").get<std::string>();
  return "";
}

// Each single source nobody seeded makes the processes differ, and the cell says which source and the
// recipe's line before any op origin (the eager per-op records name none: the inputs already differ).
// The control draws from a generator it seeds itself: deterministic, no cause, its source seeded alike.
TEST_F(PythonCallable, NamesEachUnseededSourceAsTheCauseBeforeAnyOrigin) {
  const auto cells = audit("--config " +
                               write("audit.yaml", models({"python_random", "numpy_global", "private_generator",
                                                           "torch_generator", "object_generator", "seeded_own"})) +
                               " --device cpu --repeats 2 --processes 2 --no-cost --profile default --axis threads=1",
                           1, "env -u PYTHONHASHSEED");
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 6u) << output_;
  const std::vector<std::tuple<std::string, std::string, std::string>> expected = {
      {"python_random", "random", "random.seed(seed) before the factory draws (the setting seed_random=on)"},
      {"numpy_global", "numpy.random", "np.random.seed(seed) before the factory draws (the setting seed_numpy=on)"},
      {"private_generator", "private_generator._SHUFFLE", "np.random.RandomState(seed) where it is made"},
      {"torch_generator", "step.<closure generator>", "torch.Generator().manual_seed(seed) where it is made"},
      {"object_generator", "step.rng", "np.random.default_rng(seed) where it is made"},
  };
  for (const auto& [name, source, recipe] : expected) {
    const auto& cell = cells.at(cell_key(name, "threads=1"));
    EXPECT_EQ(cell.at("verdict"), "nondeterministic") << name;
    EXPECT_EQ(cell.at("divergence_scope"), "across-processes") << name << ": each run starts from one state";
    const auto cause = cell.value("cause", "");
    EXPECT_NE(cause.find(source), std::string::npos) << name << ": " << cause;
    EXPECT_NE(cause.find(recipe), std::string::npos) << name << ": " << cause;
    EXPECT_EQ(seeded_state_of(cell, source), "differs") << name;
    // In the printed text, the cause comes before the origin's line.
    const auto at = output_.find(cell.at("key").get<std::string>() + "\n    cause: ");
    ASSERT_NE(at, std::string::npos) << output_;
    const auto origin = output_.find("origin", at);
    EXPECT_LT(output_.find("cause: ", at), origin) << name;
  }
  // The private generator's module was seeded the usual way: NumPy's global RNG is seeded alike there.
  EXPECT_EQ(seeded_state_of(cells.at(cell_key("private_generator", "threads=1")), "numpy.random"), "alike");
  const auto& control = cells.at(cell_key("seeded_own", "threads=1"));
  EXPECT_EQ(control.at("verdict"), "deterministic") << output_;
  EXPECT_FALSE(control.contains("cause"));
  EXPECT_EQ(seeded_state_of(control, "step.<closure rng>"), "alike") << control.dump();
}

// The recipe's lines are settings the matrix sweeps: each step is deterministic exactly where the line it
// needs is on, and a private generator, which no global seed reaches, never is.
TEST_F(PythonCallable, TheRecipesLinesAreSettingsThatShowWhichLineAStepNeeds) {
  const auto cells =
      audit("--config " + write("audit.yaml", models({"python_random", "numpy_global", "private_generator"})) +
                " --device cpu --repeats 2 --processes 2 --no-cost --per-op off --matrix full"
                " --axis threads=1 --axis seed_random=off,on --axis seed_numpy=off,on",
            1, "env -u PYTHONHASHSEED");
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 12u) << output_;
  for (const auto& numpy : {"off", "on"})
    for (const auto& random : {"off", "on"}) {
      const auto settings = std::string(std::string(numpy) == "on" ? "seed_numpy=on," : "") +
                            (std::string(random) == "on" ? "seed_random=on," : "") + "threads=1";
      const auto verdict = [&](const std::string& name) {
        return cells.at(cell_key(name, settings)).at("verdict").get<std::string>();
      };
      EXPECT_EQ(verdict("python_random"), std::string(random) == "on" ? "deterministic" : "nondeterministic")
          << settings;
      EXPECT_EQ(verdict("numpy_global"), std::string(numpy) == "on" ? "deterministic" : "nondeterministic") << settings;
      EXPECT_EQ(verdict("private_generator"), "nondeterministic") << settings;
    }
}

// A step that sums in a set of strings' order: processes with their own hash seeds differ and the cause
// says so (no random source explains it); with python_hash_seed=0 every process hashes alike and agrees.
TEST_F(PythonCallable, FindsAStepThatFollowsTheStringHashSeed) {
  const auto cells = audit(kRandomness +
                               "hash_order.py:make --device cpu --repeats 2 --processes 2 --no-cost --per-op off "
                               "--profile default --axis threads=1 --axis python_hash_seed=inherit,0",
                           1, "env -u PYTHONHASHSEED");
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 2u) << output_;
  const auto& unset = cells.at("py.hash_order-make/call@cpu|threads=1");
  EXPECT_EQ(unset.at("verdict"), "nondeterministic");
  EXPECT_NE(unset.value("cause", "").find("hashed strings with different seeds (PYTHONHASHSEED unset"),
            std::string::npos)
      << unset.dump();
  EXPECT_NE(unset.at("observations").at(0).at("hash_probe"), unset.at("observations").at(1).at("hash_probe"));
  const auto& fixed = cells.at("py.hash_order-make/call@cpu|python_hash_seed=0,threads=1");
  EXPECT_EQ(fixed.at("verdict"), "deterministic") << output_;
  for (const auto& observation : fixed.at("observations")) EXPECT_EQ(observation.at("hash_seed"), "0");
}

}  // namespace
