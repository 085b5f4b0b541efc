// The later timing rounds of py cells on the CPU: each in a process forked from a fork server that has
// imported torch, not in a fresh interpreter (supervisor/process_launcher.h); a round's crash reaches
// the report as any worker's does, and where no server can listen the rounds load torch themselves.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "python_callable.h"

namespace {

using namespace testing_cli;

const std::string kRounds = std::string(test_paths::kSourceDir) + "/tests/cli/py/timing_rounds.py";

// The (process, parent) pairs the callable wrote, in order, each once.
std::vector<std::pair<std::string, std::string>> processes_in(const std::string& log) {
  std::vector<std::pair<std::string, std::string>> found;
  std::ifstream in(log);
  std::string process, parent;
  while (in >> process >> parent)
    if (std::find(found.begin(), found.end(), std::make_pair(process, parent)) == found.end())
      found.emplace_back(process, parent);
  return found;
}

class PythonRounds : public PythonCallable {
 protected:
  std::map<std::string, nlohmann::json> audit_rounds(const std::string& callables, const std::string& prefix) {
    std::string config = "models:\n";
    std::istringstream names(callables);
    for (std::string name; names >> name;) config += "  - callable: " + kRounds + ":" + name + "\n";
    return audit("--config " + write("rounds.yaml", config) +
                     " --device cpu --repeats 2 --processes 1 --per-op off --profile default --axis threads=1",
                 -1, "ROUND_LOG=" + path("rounds.log") + " " + prefix);
  }
  static const nlohmann::json& first_process(const nlohmann::json& cell) { return cell.at("observations").at(0); }
};

// Round 1 runs in a worker the supervisor started; rounds 2 and 3 in processes of one fork server, each
// its own process. A process forked for a round that dies of a signal ends the round as a worker's death
// does: the cell keeps its verdict and says which rounds ended, and how. A cell whose factory builds an
// optimizer imports torch._dynamo: the first round's worker has the server import it meanwhile, and says
// so (the audit log's fork_server_preloads), rather than the second round waiting for that import.
TEST_F(PythonRounds, LaterRoundsRunInProcessesForkedFromOneServerAndTheirCrashesAreReported) {
  const auto cells = audit_rounds("records_its_process crashes_in_a_forked_round builds_an_optimizer",
                                  "REPRO_AUDIT_AUDIT_LOG=" + path("audit.log"));
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  const auto logged = nlohmann::json::parse(slurp(path("audit.log")));
  EXPECT_EQ(logged.at("fork_server_preloads"), 1) << logged.dump();
  const auto& optimizing = cells.at("py.timing_rounds-builds_an_optimizer/call@cpu|threads=1");
  EXPECT_EQ(optimizing.at("verdict"), "deterministic") << optimizing.dump();
  EXPECT_EQ(first_process(optimizing).value("timing_rounds", 1), 3) << optimizing.dump();
  EXPECT_FALSE(first_process(optimizing).contains("warnings")) << optimizing.dump();
  const auto& recorded = cells.at("py.timing_rounds-records_its_process/call@cpu|threads=1");
  EXPECT_EQ(recorded.at("verdict"), "deterministic") << recorded.dump();
  EXPECT_EQ(first_process(recorded).value("timing_rounds", 1), 3) << recorded.dump();
  EXPECT_GE(first_process(recorded).at("timing_ns").size(), 10u + 2 * 3) << recorded.dump();
  EXPECT_FALSE(first_process(recorded).contains("warnings")) << recorded.dump();
  const auto processes = processes_in(path("rounds.log"));
  ASSERT_GE(processes.size(), 3u) << slurp(path("rounds.log"));
  std::set<std::string> ids, round_parents;
  for (const auto& [process, parent] : processes) ids.insert(process);
  for (std::size_t i = 1; i < processes.size(); ++i) round_parents.insert(processes[i].second);
  EXPECT_EQ(ids.size(), processes.size()) << "two rounds shared a process: " << slurp(path("rounds.log"));
  EXPECT_EQ(round_parents.size(), 1u) << "the later rounds were not forked by one server: "
                                      << slurp(path("rounds.log"));
  EXPECT_NE(*round_parents.begin(), processes[0].second) << slurp(path("rounds.log"));

  const auto& crashing = cells.at("py.timing_rounds-crashes_in_a_forked_round/call@cpu|threads=1");
  EXPECT_EQ(crashing.at("verdict"), "deterministic") << crashing.dump();
  const auto warnings = first_process(crashing).value("warnings", nlohmann::json::array()).dump();
  for (const auto* round : {"timing round 2 ended: crashed: worker ended: signal SIGSEGV",
                            "timing round 3 ended: crashed: worker ended: signal SIGSEGV"})
    EXPECT_NE(warnings.find(round), std::string::npos) << crashing.dump();
}

// A temporary folder too deep for a socket's path: the server cannot listen, and each later round's
// worker is an interpreter the supervisor started, as before there were servers.
TEST_F(PythonRounds, WhereNoServerCanListenTheRoundsLoadTorchThemselves) {
  const auto deep = path(std::string(60, 'd') + "/" + std::string(60, 'e'));
  std::filesystem::create_directories(deep);
  const auto cells = audit_rounds("records_its_process", "TMPDIR=" + deep);
  if (cells.empty()) GTEST_SKIP() << "no Python with torch and xxhash next to the libtorch in use";
  const auto& recorded = cells.at("py.timing_rounds-records_its_process/call@cpu|threads=1");
  EXPECT_EQ(first_process(recorded).value("timing_rounds", 1), 3) << recorded.dump();
  EXPECT_FALSE(first_process(recorded).contains("warnings")) << recorded.dump();
  const auto processes = processes_in(path("rounds.log"));
  ASSERT_EQ(processes.size(), 3u) << slurp(path("rounds.log"));
  for (const auto& [process, parent] : processes)
    EXPECT_EQ(parent, processes[0].second)
        << "a round's process was not the supervisor's: " << slurp(path("rounds.log"));
}

}  // namespace
