// `repro-audit py`: the user's Python callable run by its interpreter through the shipped runner.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture_cache.h"
#include "python_callable.h"

namespace {

using namespace testing_cli;

// A real training step (MLP, SGD with momentum), eager and compiled by CPU Inductor, under strict, in
// two processes, and every cell is deterministic with its loss, parameters and gradients digested one
// by one. Inductor's checks of the machine's vector instructions land where the user's processes keep
// them (their TORCHINDUCTOR_CACHE_DIR here), and nothing of the step's compile does. The processes
// share a compile cache (the second loads what the first compiled: a compile is most of this test's
// time); a process compiling afresh in a folder of its own, the default, keeps the user's cache as clean
// (AnInductorSwitchHoldsForEveryGraphItCompiles).
TEST_F(PythonCallable, AuditsATrainingStepEagerAndCompiled) {
  const auto users = path("users-inductor");
  fs::create_directories(users);
  const auto cells =
      audit(kExample +
                ":make --parameters --device cpu --repeats 2 --processes 2 --jobs 2 --no-cost --profile strict "
                "--axis threads=2 --axis compile=off,default --compile-cache " +
                path("step-inductor"),
            0, "TORCHINDUCTOR_CACHE_DIR=" + users);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  expect_only_checks_in(users, true);
  ASSERT_EQ(cells.size(), 2u) << output_;
  for (const auto& [key, cell] : cells) {
    EXPECT_EQ(cell.at("verdict"), "deterministic") << key;
    EXPECT_EQ(cell.at("observations").size(), 2u) << key;
  }
  const auto names = output_names(cells.at("py.train_step-make/call@cpu|compile=default,deterministic_algorithms=on"));
  EXPECT_EQ(names.front(), "output");
  EXPECT_NE(std::find(names.begin(), names.end(), "grad.fc1.weight"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "params.fc2.bias"), names.end());
  // Eager and compiled steps round differently: the report says the compile mode changes the bits.
  EXPECT_NE(output_.find("compile default vs off give different bits"), std::string::npos) << output_;
}

// index_put_ with accumulate sums in a thread-dependent order on the CPU, eager and compiled (Inductor
// lowers it to atomic adds): both cells are nondeterministic, the eager one names the op, the compiled
// one the graph and the kernel its wrapper called. The race needs the threads at once, which a loaded
// machine may not give them: a cell whose audit saw none, or none in its per-op runs (so that it names no
// origin, as it must not guess one), is audited again alone (at most 3 audits). One Inductor cache
// spares the later timing rounds a compile each (the race is in the kernel, not the compile).
TEST_F(PythonCallable, FindsARacingScatterAndNamesItsOrigin) {
  struct Side {
    std::string key, compile, origin;
    nlohmann::json cell = nullptr;  // from the audit where it raced and named its origin, else the last
    bool raced = false;
  };
  Side eager{"py.train_step-scatter_sum/call@cpu|threads=4", "off", "origin of divergence: #2 aten::index_put_"};
  Side compiled{"py.train_step-scatter_sum/call@cpu|compile=default,threads=4", "default",
                "origin of divergence: #0 graph 0 (forward: full, mul, index_put_) > "
                "cpp_fused_index_put_mul_zeros_0 (torch.compile)"};
  for (int attempt = 0; attempt < 3 && !(eager.raced && compiled.raced); ++attempt) {
    const auto compile = eager.raced ? compiled.compile : compiled.raced ? eager.compile : "off,default";
    const auto cells = audit(kExample +
                                 ":scatter_sum --device cpu --repeats 8 --processes 1 --profile default "
                                 "--axis threads=4 --axis compile=" +
                                 compile + " --compile-cache " + path("inductor"),
                             -1);  // 1 where a cell raced, 0 where none did: the cells say which
    if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
    for (auto* side : {&eager, &compiled}) {
      if (side->raced || !cells.count(side->key)) continue;
      side->cell = cells.at(side->key);
      side->raced = side->cell.at("verdict") == "nondeterministic" && output_.find(side->origin) != std::string::npos;
    }
  }
  for (const auto* side : {&eager, &compiled}) {
    ASSERT_FALSE(side->cell.is_null()) << side->key << " was never audited\n" << output_;
    EXPECT_EQ(side->cell.at("verdict"), "nondeterministic") << side->key;
    EXPECT_TRUE(side->raced) << side->key << " named no origin " << side->origin << "\n" << output_;
  }
  // Timed as probes are: timing-only runs until the rule is met, in three rounds, with an interval. A
  // cell whose run takes over twice a round's budget (20 ms; timing/timing.h) is timed in its first
  // round only, as a probe's is: on a loaded machine the 4-thread scatter may.
  for (const auto* cell : {&eager.cell, &compiled.cell}) {
    const auto& observation = cell->at("observations").at(0);
    EXPECT_GE(observation.at("timing_ns").size(), 10u) << cell->dump();
    EXPECT_GT(cell->at("timing").value("ci_high_ns", 0), 0) << cell->dump();
    if (observation.value("timing_rounds", 1) == 1) {
      std::vector<std::int64_t> samples = observation.at("timing_ns");
      for (const auto& run : observation.at("runs"))
        if (!run.value("warmup", false) && !run.value("per_op", false)) samples.push_back(run.at("time_ns"));
      std::sort(samples.begin(), samples.end());
      EXPECT_GT(samples[samples.size() / 2], 20'000'000) << "a fast cell was not timed again: " << cell->dump();
    } else {
      EXPECT_EQ(observation.at("timing_rounds"), 3) << cell->dump();
      EXPECT_GE(observation.at("timing_ns").size(), 10u + 2 * 3) << cell->dump();
    }
  }
  // The report records the interpreter that ran the cells and the torch it imported.
  const auto environment = nlohmann::json::parse(slurp(path("report.json"))).at("environment");
  EXPECT_FALSE(environment.value("python_torch", "").empty()) << environment.dump();
  EXPECT_NE(environment.value("python", "").find("python"), std::string::npos) << environment.dump();
}

// Graphs loaded from a shared compile cache (AOTAutograd's or Inductor's) never pass through Inductor's
// compile step, yet are recorded as compiled ones are: a first audit fills the cache, then both
// processes of the second load from it, and each records the graph and the kernel its wrapper called.
TEST_F(PythonCallable, RecordsGraphsLoadedFromASharedCompileCache) {
  const std::string arguments = kExample +
                                ":scatter_sum --device cpu --no-cost --profile default --axis threads=4 "
                                "--axis compile=default --compile-cache " +
                                path("inductor");
  if (audit(arguments + " --repeats 2 --processes 1", -1).empty())
    GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_FALSE(fs::is_empty(path("inductor")));
  const auto cell = audit_until_raced(arguments + " --repeats 8 --processes 2", kCompiledOrigin);
  ASSERT_FALSE(cell.is_null()) << output_;
  EXPECT_EQ(cell.at("verdict"), "nondeterministic") << output_;
  EXPECT_NE(output_.find(kCompiledOrigin), std::string::npos) << output_;
  const auto names = recorded_names(cell);
  ASSERT_EQ(names.size(), 2u) << cell.dump();
  for (const auto& observation : cell.at("observations"))
    EXPECT_FALSE(observation.contains("per_op_unavailable")) << observation.at("per_op_unavailable");
  for (const auto& process : names) {
    EXPECT_TRUE(process.count("graph 0 (forward: full, mul, index_put_)")) << nlohmann::json(process).dump();
    EXPECT_TRUE(process.count("cpp_fused_index_put_mul_zeros_0")) << nlohmann::json(process).dump();
  }
}

// On CUDA inputs Inductor runs a graph's generated wrapper behind closures of its own
// (align_inputs_from_check_idxs), whose globals are torch's: the fixture puts that closure around each
// graph's callable on the CPU too, and the kernel behind it is still recorded and named.
TEST_F(PythonCallable, RecordsTheKernelsOfAGraphBehindInductorsWrapper) {
  const auto cell = audit_until_raced(kWrappedGraphs +
                                          ":scatter_sum --device cpu --repeats 8 --processes 1 --no-cost "
                                          "--profile default --axis threads=4 --axis compile=default",
                                      kCompiledOrigin);
  if (cell.is_null()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  const auto& observation = cell.at("observations").at(0);
  EXPECT_NE(observation.at("warnings").dump().find("wrapped a graph's callable in align_inputs_from_check_idxs"),
            std::string::npos)
      << observation.dump();
  EXPECT_EQ(cell.at("verdict"), "nondeterministic") << output_;
  EXPECT_NE(output_.find(kCompiledOrigin), std::string::npos) << output_;
  const auto names = recorded_names(cell).at(0);
  EXPECT_TRUE(names.count("cpp_fused_index_put_mul_zeros_0")) << nlohmann::json(names).dump();
}

// The report records the interpreter that ran the py cells and its torch, so comparing audits of two
// interpreters names the change; a switch that interpreter's torch lacks (Inductor's batch-invariant
// mode before torch 2.14) makes the cell unsupported, saying which, before anything compiles.
TEST_F(PythonCallable, RecordsTheInterpreterAndWhatItsTorchLacks) {
  // Where tools/bootstrap-torch keeps torch 2.11.0 (the compat torch every `tools/dev test` installs).
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string older = (cache && *cache ? std::string(cache) : std::string(home ? home : "") + "/.cache") +
                            "/repro-audit/torch-2.11.0/bin/python3";
  if (::access(older.c_str(), X_OK) != 0) GTEST_SKIP() << "no torch 2.11.0 interpreter at " << older;
  const auto first = audit(kBad +
                               ":fine --device cpu --repeats 2 --processes 1 --no-cost --profile default "
                               "--axis threads=1",
                           0);
  if (first.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  std::filesystem::rename(path("report.json"), path("default.json"));
  const auto cells = audit(kBad + ":fine --python " + older +
                               " --device cpu --repeats 2 --processes 1 --no-cost --profile default --axis threads=1 "
                               "--axis compile=default --axis inductor_batch_invariant=on",
                           1);
  if (cells.empty()) GTEST_SKIP() << older << " cannot import torch and xxhash";
  ASSERT_EQ(cells.size(), 1u) << output_;
  const auto& cell = cells.begin()->second;
  EXPECT_EQ(cell.at("verdict"), "unsupported") << output_;
  EXPECT_NE(cell.dump().find("inductor_batch_invariant: torch 2.11.0"), std::string::npos) << cell.dump();
  EXPECT_NE(cell.dump().find("has no torch._inductor.config.batch_invariant"), std::string::npos);
  const auto environment = nlohmann::json::parse(slurp(path("report.json"))).at("environment");
  EXPECT_EQ(environment.value("python_torch", "").rfind("2.11.0", 0), 0u) << environment.dump();
  EXPECT_NE(environment.value("python", "").find(older), std::string::npos) << environment.dump();
  const auto compared = run("compare " + path("default.json") + " " + path("report.json"));
  EXPECT_NE(compared.output.find("Python torch"), std::string::npos) << compared.output;
  EXPECT_NE(compared.output.find("2.11.0"), std::string::npos) << compared.output;
}

// Each way a callable can go wrong is its cell's verdict; the audit finishes the other cells, and the
// workers that crashed or were killed leave nothing in the temporary folder (their Inductor caches).
TEST_F(PythonCallable, GivesBadCallablesAClearVerdict) {
  // The time limit ends the hanging one; the first cell's also holds its module's import, which on a
  // machine busy with other tests took over 3 s.
  std::string config = "timeout: 8\nmodels:\n";
  for (const std::string name :
       {"raises", "no_tensors", "prints", "warns_once", "warns_once_too", "exits", "dies", "hangs", "fine"})
    config += "  - callable: " + kBad + ":" + name + "\n";
  config += "  - callable: no_such_module_here:step\n";
  const auto temporary = folder_ / "tmp";
  fs::create_directories(temporary);
  const auto cells = audit("--config " + write("audit.yaml", config) +
                               " --device cpu --repeats 2 --processes 1 --no-cost --profile default --axis threads=1",
                           1, "TMPDIR=" + temporary.string());
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  EXPECT_EQ(count_files(temporary, ""), 0);
  const auto cell = [&](const std::string& name) {
    return cells.at("py.bad_callables-" + name + "/call@cpu|threads=1");
  };
  const auto message = [&](const std::string& name) {
    return cell(name).at("observations").at(0).value("message", "");
  };
  EXPECT_EQ(cell("raises").at("verdict"), "error");
  EXPECT_NE(message("raises").find("ValueError: the step failed on purpose"), std::string::npos);
  EXPECT_NE(message("no_tensors").find("returned no tensors"), std::string::npos);
  EXPECT_NE(message("exits").find("sys.exit(3)"), std::string::npos);
  EXPECT_EQ(cell("dies").at("verdict"), "crashed");
  EXPECT_EQ(cell("hangs").at("verdict"), "timeout");
  EXPECT_EQ(cell("fine").at("verdict"), "deterministic");
  // Kernels are traced on CUDA only; a CPU cell says so (the test switch above is not set here).
  EXPECT_NE(cell("fine").at("observations").at(0).value("trace_unavailable", "").find("on CUDA only"),
            std::string::npos)
      << cell("fine").dump();
  EXPECT_EQ(cell("prints").at("verdict"), "deterministic");
  EXPECT_NE(cell("prints").at("observations").at(0).at("warnings").dump().find("printed"), std::string::npos);
  // The second cell in the worker hears libtorch's once-per-process warning too.
  for (const std::string name : {"warns_once", "warns_once_too"})
    EXPECT_NE(cell(name).at("observations").at(0).at("warnings").dump().find("return_complex=False"), std::string::npos)
        << cell(name).dump();
  const auto& missing = cells.at("py.no_such_module_here-step/call@cpu|threads=1");
  EXPECT_NE(missing.at("observations").at(0).value("message", "").find("cannot import"), std::string::npos);

  // `repro` of a py cell: a script that runs the shipped runner, which imports the callable by its path.
  const auto exported = run("repro " + path("report.json") + " 'py.bad_callables-fine/*' -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto ran = shell(std::string(test_paths::kPython) + " " + path("out/py.bad_callables-fine_call_cpu_threads=1") +
                         "/repro.py --processes 2 --runs 2");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find("verdict here: deterministic; in the report: deterministic"), std::string::npos)
      << ran.output;
  EXPECT_NE(ran.output.find("1 of 1 digest(s) seen here were seen by the audit"), std::string::npos) << ran.output;
}

// Is `pid` a process that still runs (a zombie, killed and waiting for init to reap it, does not)?
bool runs(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// A callable whose child keeps the worker's descriptors (os.fork, Popen(close_fds=False): what data
// loaders and compile pools do): the worker's end is its exit, so the audit ends promptly with its
// report, and nothing the callable started outlives the audit.
TEST_F(PythonCallable, WhatACallableStartsNeitherHoldsUpTheAuditNorOutlivesIt) {
  const auto markers = folder_ / "markers";
  fs::create_directories(markers);
  std::string config = "models:\n";
  for (const std::string name : {"forks_a_holder", "starts_a_sleep"})
    config += "  - callable: " + kBad + ":" + name + "\n";
  const auto started = std::chrono::steady_clock::now();
  const auto cells = audit("--config " + write("audit.yaml", config) +
                               " --device cpu --repeats 2 --processes 1 --no-cost --profile default --axis threads=1",
                           0, "timeout -s KILL 300 env REPRO_AUDIT_TEST_MARKERS=" + markers.string());
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  // Each worker waited 60 s for the end of its output, then the supervisor crashed; now neither.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 60) << output_;
  for (const auto& [key, cell] : cells) EXPECT_EQ(cell.at("verdict"), "deterministic") << key;
  EXPECT_EQ(cells.size(), 2u);
  std::vector<pid_t> children;
  for (const auto& marker : fs::directory_iterator(markers)) children.push_back(std::stoi(slurp(marker.path())));
  EXPECT_GE(children.size(), 2u);  // a child per call of each callable
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (const pid_t child : children) {
    while (runs(child) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(runs(child)) << "process " << child << " of the callable outlived the audit";
    if (runs(child)) ::kill(child, SIGKILL);
  }
}

// inductor_deterministic=on holds for every graph of a step with a graph break, under the default
// profile: torch.use_deterministic_algorithms(False), which Dynamo calls again after each frame it
// converts, sets Inductor's global flag back, so the switch also goes to every compile as a config patch.
// A worker whose cells compile nothing sets torch's deterministic switch without importing Inductor's
// config (and Dynamo with it: most of a second a worker): no cell's step finds Dynamo loaded. A step that
// imports the config itself finds it holding the mode, as torch.use_deterministic_algorithms leaves it.
TEST_F(PythonCallable, TheDeterministicSwitchLeavesInductorsConfigAsTorchDoesWithoutImportingIt) {
  const std::string module = std::string(test_paths::kSourceDir) + "/tests/cli/py/late_inductor_config.py";
  const std::string options =
      " --device cpu --repeats 2 --processes 1 --no-cost --per-op off --axis threads=1 --profile strict";
  auto cells = audit(module + ":dynamo_not_imported" + options + " --profile default --profile strict-warn", 0);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  ASSERT_EQ(cells.size(), 3u) << output_;
  for (const auto& [key, cell] : cells) EXPECT_EQ(cell.at("verdict"), "deterministic") << key << "\n" << output_;
  // Strict alone: the config is first imported after the switch was turned on.
  cells = audit(module + ":config_imported_late" + options, 0);
  ASSERT_EQ(cells.size(), 1u) << output_;
  EXPECT_EQ(cells.begin()->second.at("verdict"), "deterministic") << output_;
}

// Compiled afresh in each worker's own folder (no --compile-cache): nothing of it in the user's cache.
// That cache is one kept with this machine's test fixtures, as a user's is kept: the vector-instruction
// checks it holds are seconds of compiles, made in its first audit only (AuditsATrainingStepEagerAndCompiled
// makes them in a fresh one). What a compile could have left there from an earlier audit is removed first.
TEST_F(PythonCallable, AnInductorSwitchHoldsForEveryGraphItCompiles) {
  const auto users = (repro_audit::testing::fixture_cache_folder() / "users-inductor").string();
  fs::create_directories(users);
  for (const auto* compiled : {"fxgraph", "aotautograd"}) fs::remove_all(fs::path(users) / compiled);
  const auto cells = audit(kSwitches +
                               ":broken --device cpu --repeats 2 --processes 1 --no-cost --per-op off "
                               "--profile default --axis threads=1 --axis compile=default "
                               "--axis inductor_deterministic=off,on",
                           0, "TORCHINDUCTOR_CACHE_DIR=" + users);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  expect_only_checks_in(users, false);
  ASSERT_EQ(cells.size(), 2u) << output_;
  for (const auto& [key, cell] : cells) {
    const auto on = key.find("inductor_deterministic=on") != std::string::npos;
    const auto warnings = cell.at("observations").at(0).value("warnings", nlohmann::json::array()).dump();
    const std::string wanted = on ? "deterministic=True" : "deterministic=False";
    const std::string unwanted = on ? "deterministic=False" : "deterministic=True";
    EXPECT_NE(warnings.find(wanted), std::string::npos) << key << ": " << warnings;
    EXPECT_EQ(warnings.find(unwanted), std::string::npos) << key << ": " << warnings;
  }
}

}  // namespace
