// Collective cells on the real binary: gloo ranks on this host, their verdicts and the world-size
// level; a rank that crashes, hangs or never joins ends its cell (crashed, timeout), the audit goes on,
// and no rank process is left behind.
#include <dirent.h>

#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class Collective : public CliTest {};

// Processes of the build's programs (repro-audit-torch, repro-audit-cpu: whichever worker started them)
// running `rank` (the other ranks of collective cells) started by an audit whose TMPDIR was `folder` (the
// ranks inherit it): other tests' ranks are not counted.
int rank_processes(const fs::path& folder) {
  const auto programs = fs::path(binary()).parent_path().string() + "/repro-audit";
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream file(entry.path() / "cmdline");
    std::string argv0, argv1;
    std::getline(file, argv0, '\0');
    std::getline(file, argv1, '\0');
    if (argv0.rfind(programs, 0) != 0 || argv1 != "rank") continue;
    std::ifstream environment(entry.path() / "environ");
    const std::string variables((std::istreambuf_iterator<char>(environment)), std::istreambuf_iterator<char>());
    if (variables.find("TMPDIR=" + folder.string() + '\0') != std::string::npos) ++count;
  }
  return count;
}

// "all_gather/f32@cpu|ranks=3,threads=1"
std::string fmt_key(const std::string& variant, int ranks) {
  return variant + "@cpu|ranks=" + std::to_string(ranks) + ",threads=1";
}

const json& cell_of(const json& report, const std::string& key) {
  for (const auto& cell : report.at("cells"))
    if (cell.at("key") == key) return cell;
  throw std::runtime_error("no cell " + key);
}

// Run by copies of the programs that log what starts repro-audit-cpu: a CPU cell's ranks are started from it
// (without libtorch's CUDA half) whichever program runs the cell's worker.
TEST_F(Collective, GlooRanksOnThisHostGiveVerdictsAndTheWorldSizeLevel) {
  const auto report = path("r.json");
  const auto programs = programs_logging_cpu_starts(path("programs"));
  const auto audit = shell("TMPDIR=" + folder_.string() + " " + (programs.empty() ? binary() : programs) +
                           " run --device cpu --probe all_gather --probe all_reduce/f32 --profile default --axis "
                           "threads=1 --repeats 3 --no-cost --json " +
                           report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  if (!programs.empty())
    EXPECT_NE(slurp(path("programs/cpu-starts.log")).find("rank\n"), std::string::npos)
        << slurp(path("programs/cpu-starts.log"));
  const auto written = json::parse(slurp(report));
  for (const auto* probe : {"all_gather/f32", "all_reduce/f32"})
    for (const int ranks : {2, 3, 4}) {
      const auto key = fmt_key(probe, ranks);
      const auto& cell = cell_of(written, key);
      EXPECT_EQ(cell.at("verdict"), "deterministic") << key << ": " << cell.dump();
      const auto& outputs = cell.at("observations").at(0).at("runs").at(0).at("outputs");
      EXPECT_EQ(outputs.size(), static_cast<std::size_t>(ranks) + 1) << "the result and one digest per rank";
    }
  EXPECT_NE(cell_of(written, fmt_key("all_reduce/f32", 2)).at("message").get<std::string>().find("2 ranks"),
            std::string::npos);
  // all_reduce's sensitivity to the order, measured without ranks.
  EXPECT_GT(cell_of(written, fmt_key("all_reduce/f32", 3)).at("sensitivity").at("changed").get<int>(), 0);
  std::map<std::string, json> levels;
  for (const auto& entry : written.at("portability")) levels[entry.at("probe").get<std::string>()] = entry;
  EXPECT_EQ(levels.at("all_gather").value("invariance", ""), "world-size-invariant") << levels.at("all_gather");
  EXPECT_EQ(rank_processes(folder_), 0);
}

TEST_F(Collective, ARankThatCrashesHangsOrNeverJoinsEndsItsCellAndNothingElse) {
  const auto report = path("r.json");
  const auto audit =
      run("run --device cpu --probe control.rank_crash --probe control.rank_hang --probe control.rank_absent --probe "
          "all_gather --profile default --axis threads=1 --axis ranks=3 --processes 1 --repeats 2 --no-cost --json " +
              report,
          "TMPDIR=" + folder_.string());
  EXPECT_EQ(audit.exit_code, 1) << audit.output;
  const auto written = json::parse(slurp(report));
  const auto& crashed = cell_of(written, "control.rank_crash/default@cpu|ranks=3,threads=1");
  EXPECT_EQ(crashed.at("verdict"), "crashed") << crashed.dump();
  EXPECT_NE(crashed.at("message").get<std::string>().find("rank 2 ended: signal SIGSEGV"), std::string::npos)
      << crashed.at("message");
  const auto& hung = cell_of(written, "control.rank_hang/default@cpu|ranks=3,threads=1");
  EXPECT_EQ(hung.at("verdict"), "timeout") << hung.dump();
  EXPECT_NE(hung.at("message").get<std::string>().find("did not answer in run 0"), std::string::npos)
      << hung.at("message");
  const auto& absent = cell_of(written, "control.rank_absent/default@cpu|ranks=3,threads=1");
  EXPECT_EQ(absent.at("verdict"), "timeout") << absent.dump();
  EXPECT_NE(absent.at("message").get<std::string>().find("rank 2 never joined"), std::string::npos)
      << absent.at("message");
  // The audit went on: the healthy collective after them was judged.
  EXPECT_EQ(cell_of(written, "all_gather/f32@cpu|ranks=3,threads=1").at("verdict"), "deterministic");
  EXPECT_EQ(rank_processes(folder_), 0) << "a rank outlived its cell";
}

TEST_F(Collective, ACollectiveNeedsRanksAndOtherProbesRunAlone) {
  const auto mixed = run("run --device cpu --probe all_gather --probe sum/f32 --axis ranks=3 --repeats 2 --no-cost");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  EXPECT_NE(mixed.output.find("'sum' is not a collective"), std::string::npos) << mixed.output;
  const auto listed = run("list");
  EXPECT_NE(listed.output.find("all_reduce"), std::string::npos);
  const auto bad = run("run --device cpu --probe all_gather --axis ranks=0");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

}  // namespace
