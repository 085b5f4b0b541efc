// `py` cells that make a DataLoader: real loaders with real worker processes (num_workers=2) over the
// examples in examples/py/loader, audited by the real binary in two processes each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "python_callable.h"

namespace {

using namespace testing_cli;

const std::string kLoaders = std::string(test_paths::kSourceDir) + "/examples/py/loader/";
const std::string kPlainLoaders = std::string(test_paths::kSourceDir) + "/tests/cli/py/loaders.py";

std::string key(const std::string& name, const std::string& settings) {
  return "py." + name + "-make/call@cpu|" + settings;
}

std::string findings(const nlohmann::json& cell) {
  std::string text;
  for (const auto& finding : cell.value("findings", nlohmann::json::array())) text += finding.get<std::string>() + "\n";
  return text;
}

// A dataset that draws from NumPy's global RNG in the loading process: every batch is digested, the
// processes part at the first batch with the same samples and other content, and the cause is NumPy's
// unseeded RNG; seed_numpy=on fixes it. With two workers torch seeds NumPy in each: deterministic, and
// other bits than with none (the batches change with the worker count).
TEST_F(PythonCallable, DigestsEveryBatchAndSaysWhereTwoProcessesLoadersPart) {
  const auto cells = audit(kLoaders +
                               "numpy_augment.py:make --device cpu --repeats 2 --processes 2 --no-cost --per-op off "
                               "--matrix full --axis threads=1 --axis loader_workers=0,2 --axis seed_numpy=off,on",
                           1, "env -u PYTHONHASHSEED");
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 4u) << output_;
  const auto& unseeded = cells.at(key("numpy_augment", "loader_workers=0,threads=1"));
  EXPECT_EQ(unseeded.at("verdict"), "nondeterministic");
  EXPECT_NE(unseeded.value("cause", "").find("NumPy's global RNG"), std::string::npos) << unseeded.dump();
  const auto note = unseeded.value("origin_note", "");
  EXPECT_NE(note.find("the batches part at epoch 0 batch 0: the same samples ["), std::string::npos) << note;
  EXPECT_NE(note.find("with other content"), std::string::npos) << note;
  const auto& batches = unseeded.at("observations").at(0).at("loader").at("batches");
  EXPECT_EQ(batches.size(), 20u);  // 2 epochs of 10 batches of 8
  EXPECT_EQ(batches.at(0).at("indices").size(), 8u);
  EXPECT_EQ(batches.at(0).at("samples").size(), 8u);
  EXPECT_EQ(unseeded.at("observations").at(0).at("runs").at(0).at("outputs").size(), 40u);  // (x, index) a batch
  EXPECT_EQ(cells.at(key("numpy_augment", "loader_workers=0,seed_numpy=on,threads=1")).at("verdict"), "deterministic");
  const auto& workers = cells.at(key("numpy_augment", "loader_workers=2,threads=1"));
  EXPECT_EQ(workers.at("verdict"), "deterministic");
  std::set<int> made_by;
  for (const auto& batch : workers.at("observations").at(0).at("loader").at("batches"))
    made_by.insert(batch.at("worker").get<int>());
  EXPECT_EQ(made_by, (std::set<int>{0, 1}));
  EXPECT_NE(output_.find("loader_workers 0 vs 2 give different bits"), std::string::npos) << output_;
}

// pytorch#5059's class: a generator made in the dataset's __init__ is copied into both workers, which
// draw the same numbers; the batches agree between processes, and seeding the workers' global generators
// (the documented worker_init_fn) does not change it. A sampler seeded again each epoch repeats one order.
TEST_F(PythonCallable, FindsWorkersThatShareOneStreamAndEpochsThatRepeatOneOrder) {
  const auto cells = audit(
      "--config " +
          write("audit.yaml", "models:\n  - callable: " + kLoaders +
                                  "shared_stream.py:make\n  - callable: " + kLoaders + "repeating_epochs.py:make\n") +
          " --device cpu --repeats 2 --processes 2 --no-cost --per-op off --profile default"
          " --axis threads=1 --axis loader_seed_workers=off,on",
      0);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 4u) << output_;
  for (const auto& settings : {"threads=1", "loader_seed_workers=on,threads=1"}) {
    const auto& shared = cells.at(key("shared_stream", settings));
    EXPECT_EQ(shared.at("verdict"), "deterministic") << settings;
    EXPECT_NE(findings(shared).find("workers 0, 1 start dataset.rng in one state"), std::string::npos)
        << settings << ": " << shared.dump();
    const auto& repeating = cells.at(key("repeating_epochs", settings));
    EXPECT_NE(findings(repeating).find("every epoch of the DataLoader gave its samples in one shuffled order"),
              std::string::npos)
        << settings;
  }
  EXPECT_NE(output_.find("Found beside the bits:"), std::string::npos) << output_;
}

// A shuffle drawn from a generator seeded by the operating system: the processes part at the first batch
// with another order of samples; a seeded generator= (loader_generator=on) fixes it.
TEST_F(PythonCallable, ALoaderShuffledUnseededPartsByOrderAndTheSeededGeneratorFixesIt) {
  const auto cells = audit(kLoaders +
                               "os_seeded_shuffle.py:make --device cpu --repeats 2 --processes 2 --no-cost "
                               "--per-op off --profile default --axis threads=1 --axis loader_generator=off,on",
                           1);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 2u) << output_;
  const auto& off = cells.at(key("os_seeded_shuffle", "threads=1"));
  EXPECT_EQ(off.at("verdict"), "nondeterministic");
  EXPECT_NE(off.value("origin_note", "").find("another order of samples"), std::string::npos) << off.dump();
  EXPECT_EQ(cells.at(key("os_seeded_shuffle", "loader_generator=on,threads=1")).at("verdict"), "deterministic");
}

// A loader with no batches, or batches without tensors, is the cell's error saying so; a plain generator of
// batches is a loader too (its second epoch finds it spent).
TEST_F(PythonCallable, GivesLoadersWithNothingToDigestAClearVerdict) {
  const auto cells = audit(
      "--config " +
          write("audit.yaml", "models:\n  - callable: " + kPlainLoaders + ":empty\n  - callable: " + kPlainLoaders +
                                  ":strings\n  - callable: " + kPlainLoaders + ":generator\n") +
          " --device cpu --repeats 2 --processes 1 --no-cost --profile default --axis threads=1",
      1);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 3u) << output_;
  EXPECT_NE(cells.at("py.loaders-empty/call@cpu|threads=1").value("message", "").find("yielded no batches"),
            std::string::npos);
  EXPECT_NE(cells.at("py.loaders-strings/call@cpu|threads=1").value("message", "").find("hold no tensors"),
            std::string::npos);
  const auto& plain = cells.at("py.loaders-generator/call@cpu|threads=1");
  EXPECT_EQ(plain.at("verdict"), "deterministic");
  EXPECT_EQ(plain.at("observations").at(0).at("runs").at(0).at("outputs").size(), 3u);
}

}  // namespace
