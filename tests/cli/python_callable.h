#pragma once
// The fixture of the `py` CLI tests: a callable audited by the real binary, its report's cells by key.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace testing_cli {

inline const std::string kExample = std::string(test_paths::kSourceDir) + "/examples/py/train_step.py";
inline const std::string kBad = std::string(test_paths::kSourceDir) + "/tests/cli/py/bad_callables.py";
inline const std::string kWrappedGraphs = std::string(test_paths::kSourceDir) + "/tests/cli/py/wrapped_graphs.py";
inline const std::string kSwitches = std::string(test_paths::kSourceDir) + "/tests/cli/py/inductor_switches.py";
// A racing scatter's compiled origin: the graph, then the kernel its generated wrapper called.
inline const std::string kCompiledOrigin =
    "origin of divergence: #0 graph 0 (forward: full, mul, index_put_) > cpp_fused_index_put_mul_zeros_0 "
    "(torch.compile)";

class PythonCallable : public CliTest {
 protected:
  // The report's cells by key; skips the test where no Python with torch and xxhash is next to libtorch.
  // An expected exit below 0 is not checked.
  std::map<std::string, nlohmann::json> audit(const std::string& arguments, int expected_exit,
                                              const std::string& prefix = "") {
    const auto result = run("py " + arguments + " --json " + path("report.json"), prefix);
    if (result.output.find("no Python found next to the libtorch") != std::string::npos ||
        result.output.find("cannot import torch and xxhash") != std::string::npos)
      return {};
    if (expected_exit >= 0) EXPECT_EQ(result.exit_code, expected_exit) << result.output;
    output_ = result.output;
    std::map<std::string, nlohmann::json> cells;
    const auto report = nlohmann::json::parse(slurp(path("report.json")));
    for (const auto& cell : report.at("cells")) cells[cell.at("key").get<std::string>()] = cell;
    return cells;
  }
  static std::vector<std::string> output_names(const nlohmann::json& cell) {
    std::vector<std::string> names;
    for (const auto& output : cell.at("observations").at(0).at("runs").at(0).at("outputs"))
      names.push_back(output.at("name").get<std::string>());
    return names;
  }
  // Audits a racing step until its one cell is nondeterministic and names `origin` (at most 3 audits):
  // the race needs the threads at once, which a loaded machine may not give them. An origin needs it in
  // the runs that record ops, half the repeats (at least 2): the racing tests give 8 repeats, so 4 runs
  // record (with 4 and 2 recording, a cold CTest saw the race only in plain runs, three audits running).
  // Empty where skipped.
  nlohmann::json audit_until_raced(const std::string& arguments, const std::string& origin) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const auto cells = audit(arguments, -1);
      if (cells.empty()) return {};
      EXPECT_EQ(cells.size(), 1u) << output_;
      const auto& cell = cells.begin()->second;
      if (attempt == 2 || (cell.at("verdict") == "nondeterministic" && output_.find(origin) != std::string::npos))
        return cell;
    }
    return {};
  }
  // The user's own Inductor cache (their TORCHINDUCTOR_CACHE_DIR) after an audit that compiled: Inductor's
  // checks of the machine's vector instructions land there, as in their own processes, and nothing of
  // the callable's compile does (it compiles in the cell's cache: a folder of the worker's, or
  // --compile-cache's). `fresh`: the folder was empty before the audit, so its checks are the audit's.
  static void expect_only_checks_in(const std::string& users, bool fresh) {
    std::vector<std::string> checks, compiled;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(users)) {
      const auto name = entry.path().filename().string();
      if (entry.path().extension() == ".so") checks.push_back(name);  // a check's program, built and loaded
      if (entry.is_directory() && (name == "fxgraph" || name == "aotautograd")) compiled.push_back(name);
    }
    // Inductor checks the vector instructions the CPU lists (x86: AVX2 and up); a CPU without any has none.
    if (fresh && slurp("/proc/cpuinfo").find(" avx2") != std::string::npos)
      EXPECT_FALSE(checks.empty()) << "no vector-instruction check in " << users;
    EXPECT_TRUE(compiled.empty()) << "the callable's compile reached " << users << ": " << compiled.front();
  }
  // The names each process's recorded runs hold, one set per process.
  static std::vector<std::set<std::string>> recorded_names(const nlohmann::json& cell) {
    std::vector<std::set<std::string>> found;
    for (const auto& observation : cell.at("observations")) {
      auto& names = found.emplace_back();
      for (const auto& sequence : observation.value("op_sequences", nlohmann::json::array()))
        for (const auto& op : sequence.at("ops")) names.insert(op.at("name").get<std::string>());
    }
    return found;
  }
  std::string output_;
};

}  // namespace testing_cli
