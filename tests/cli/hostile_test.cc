// Hostile but fair use, by class: nothing of the user's replaced, every reader equally strict, every
// axis what it says, bounds that cannot be switched off, messages a terminal can bear. Each test runs
// the real binary on one small report made once for the suite; none audits more than one cell.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

// sum/f32 under strict with one thread: one cell, made once for every test.
const std::string& small_report() {
  static const std::string report = shared_report(
      "sum-strict",
      "--device cpu --probe sum/f32 --profile strict --axis threads=1 --repeats 2 --processes 1 --no-cost");
  return report;
}

class Hostile : public CliTest {
 protected:
  // The small report with `change` applied to its JSON, written as `name`.
  std::string crafted(const std::string& name, const std::function<void(json&)>& change) {
    auto report = json::parse(slurp(small_report()));
    change(report);
    return write(name, report.dump(1));
  }
  // Every command that reads a report, on `report`: each must refuse it (exit 2) saying `message`.
  void expect_refused_by_every_reader(const std::string& report, const std::string& message) {
    for (const auto& command :
         {"show " + report, "compare " + small_report() + " " + report, "baseline " + report + " -o " + path("b.yaml"),
          "merge " + report + " -o " + path("m.json"), "fleet " + report + " " + small_report(),
          "explain " + small_report() + " " + report, "repro " + report + " '*' -o " + path("out")}) {
      const auto result = run(command);
      EXPECT_EQ(result.exit_code, 2) << command << ": " << result.output;
      EXPECT_NE(result.output.find(message), std::string::npos) << command << ": " << result.output;
    }
    EXPECT_FALSE(fs::exists(path("b.yaml")));
    EXPECT_FALSE(fs::exists(path("m.json")));
  }
};

TEST_F(Hostile, AnUnknownCommandIsNamedWithTheValidOnes) {
  const auto result = run("frobnicate");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("unknown command 'frobnicate'; valid commands: run, model, py, list"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("worker"), std::string::npos) << result.output;  // internal commands stay hidden
}

TEST_F(Hostile, AKeyTwiceInAReportsJsonIsRefusedByEveryReader) {
  // Before, the last one won: show and gate said nondeterministic, merge wrote deterministic.
  auto text = slurp(small_report());
  const std::string verdict = "\"verdict\": \"deterministic\"";
  ASSERT_NE(text.find(verdict), std::string::npos);
  text.replace(text.find(verdict), verdict.size(), "\"verdict\": \"nondeterministic\", " + verdict);
  expect_refused_by_every_reader(write("twice.json", text), "the key \"verdict\" appears twice in one object");
}

TEST_F(Hostile, AnUnknownSettingInACellIsRefusedByEveryReader) {
  const auto report = crafted("evil.json", [](json& r) { r["cells"][0]["settings"]["evil"] = "x"; });
  expect_refused_by_every_reader(report, "malformed report: cells[0]");
  EXPECT_NE(run("show " + report).output.find("setting \"evil\" is not one of: "), std::string::npos);
}

TEST_F(Hostile, AReportsConfigIsHeldToTheRulesOfAConfig) {
  const std::vector<std::pair<std::string, std::function<void(json&)>>> changes = {
      {"unknown profile 'evil'", [](json& r) { r["config"]["profiles"] = {"evil"}; }},
      {"invalid value '0' for setting 'threads'",
       [](json& r) {
         r["config"]["axes"] = {{"threads", {"0"}}};
       }},
      {"unknown setting 'evil'",
       [](json& r) {
         r["config"]["axes"] = {{"evil", {"1"}}};
       }},
      {"repeats must be from 1", [](json& r) { r["config"]["repeats"] = 0; }},
      {"malformed config", [](json& r) { r["config"]["repeats"] = "x"; }},
      {"not a probe name",
       [](json& r) {
         r["config"]["probes"] = {{{"probe", "../x"}, {"variants", json::array()}}};
       }},
  };
  for (const auto& [message, change] : changes) {
    const auto result = run("show " + crafted("config.json", change));
    EXPECT_EQ(result.exit_code, 2) << message << ": " << result.output;
    EXPECT_NE(result.output.find("malformed report"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
  }
}

TEST_F(Hostile, AWrongTypedFieldIsNamed) {
  const auto result = run("show " + crafted("typed.json", [](json& r) { r["cells"][0]["runs"] = "x"; }));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("\"runs\": type must be an integer, but is string"), std::string::npos) << result.output;
}

TEST_F(Hostile, AReportWithAByteOrderMarkReadsAsWithout) {
  const auto marked = write("bom.json", "\xEF\xBB\xBF" + slurp(small_report()));
  const auto result = run("compare " + small_report() + " " + marked);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(run("show " + marked).exit_code, 0);
}

TEST_F(Hostile, BaselineKeysAreHeldToTheCellGrammar) {
  const auto baseline = path("b.yaml");
  ASSERT_EQ(run("baseline " + small_report() + " -o " + baseline).exit_code, 0);
  const auto text = slurp(baseline);
  const std::string key = "sum/f32@cpu|deterministic_algorithms=on,threads=1";
  ASSERT_NE(text.find(key), std::string::npos) << text;
  for (const std::string bad : {"..", "sum/f32@cpu|threads=0", "sum/f32@cpu|ranks=99", "sum/f32@cpu|threads=01",
                                "sum/f32@cpu|evil=x", "\"__import__('os').system('true')\""}) {
    auto edited = text;
    edited.replace(edited.find(key), key.size(), bad);
    const auto file = write("bad.yaml", edited);
    // compare and gate read baselines alike (compare/baseline.h); before, compare passed and gate said
    // "nothing was compared".
    const auto command = bad == ".." ? "gate --baseline " + file + " --report " + small_report()
                                     : "compare " + file + " " + small_report();
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << bad << ": " << command << ": " << result.output;
    EXPECT_NE(result.output.find("malformed baseline"), std::string::npos) << bad << ": " << result.output;
  }
}

TEST_F(Hostile, SettingValuesAreOneCellHoweverTheyAreWritten) {
  // threads=01 is threads=1, a repeated --axis adds to the first, a value given twice is refused.
  const auto report = path("r.json");
  const auto audit =
      run("run --device cpu --probe sum/f32 --profile default --axis threads=01 --axis threads=3 --repeats 2 "
          "--processes 1 --no-cost --quiet --json " +
          report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  std::vector<std::string> keys;
  const auto audited = json::parse(slurp(report));
  for (const auto& cell : audited["cells"]) keys.push_back(cell["key"]);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"sum/f32@cpu|threads=1", "sum/f32@cpu|threads=3"}));
  const auto twice = run("run --device cpu --probe sum/f32 --axis threads=2,02 --repeats 2");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.output.find("--axis threads: the value 2 is given twice"), std::string::npos) << twice.output;
}

TEST_F(Hostile, RanksOfOneForACollectiveAreRefusedNotReplaced) {
  const auto result = run("run --device cpu --probe all_reduce --axis ranks=1 --repeats 2");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("'all_reduce' is a collective, and no flag set has ranks of 2 or more"),
            std::string::npos)
      << result.output;
}

TEST_F(Hostile, FleetShowsAHostNameAsOneLineOfText) {
  const auto other = crafted("other.json", [](json& r) { r["host"] = "evil\x1b[2J\nfake line"; });
  const auto result = run("fleet " + small_report() + " " + other);
  EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("\nfake line"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("evil?[2J?fake line"), std::string::npos) << result.output;
}

TEST_F(Hostile, EveryPrinterShowsAReportsTextWithoutItsEscapeCodes) {
  const auto report = crafted("escapes.json", [](json& r) {
    auto& cell = r["cells"][0];
    cell["message"] = "a\x1b[31mred\nline";
    cell["warnings"] = {"b\x1b[2Jclear"};
    cell["documented"] = "c\x1b[1m";
    r["environment"]["torch"] = "d\x1b[7m";
  });
  for (const auto& command : {"show " + report + " sum", "show " + report, "compare " + small_report() + " " + report,
                              "compare " + report + " " + small_report() + " --markdown " + path("c.md"),
                              "fleet " + small_report() + " " + report}) {
    const auto result = run(command);
    EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << command << ": " << result.output;
  }
}

TEST_F(Hostile, AHugeNameInARefusedReportIsNotEchoedInFull) {
  const auto report = crafted("huge.json", [](json& r) {
    r["cells"][0]["probe"] = std::string(1 << 20, 'a');
    r["cells"][0]["key"] = std::string(1 << 20, 'a') + "/f32@cpu";
  });
  const auto result = run("show " + report);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_LT(result.output.size(), 8192u) << result.output.substr(0, 400);
}

TEST_F(Hostile, ADeviceIsNotReadAsAReport) {
  const auto result = run("show /dev/zero");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("/dev/zero: cannot read the report: is a character device, not a regular file"),
            std::string::npos)
      << result.output;
}

// The most memory `binary arguments` held at once, in KiB (the child's own, from wait4).
long peak_memory_kib(const std::string& arguments) {
  const auto command = "exec " + binary() + " " + arguments + " > /dev/null 2>&1";
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) return -1;
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return usage.ru_maxrss;
}

// A report of 10,000 cells that differ by seed is read in a few times its size. Finding the settings
// that change the bits copied every setting's text once per setting: 12 times the file (a report of
// 10^6 cells took 21 GB to `show`).
TEST_F(Hostile, AReportIsReadInAFewTimesItsSize) {
  auto report = json::parse(slurp(small_report()));
  const auto cell = report.at("cells").at(0);
  auto& cells = report.at("cells") = json::array();
  for (int seed = 1; seed <= 10000; ++seed) {
    auto copy = cell;
    copy.at("settings")["seed"] = std::to_string(seed);
    auto& key = copy.at("key").get_ref<std::string&>();
    key.insert(key.find("threads="), "seed=" + std::to_string(seed) + ",");
    cells.push_back(std::move(copy));
  }
  const auto large = write("large.json", report.dump());
  const auto one_cell = peak_memory_kib("show " + small_report() + " sum");
  const auto all = peak_memory_kib("show " + large + " seed=7,");
  ASSERT_GT(one_cell, 0);
  ASSERT_GT(all, 0);
  const auto file_kib = static_cast<long>(fs::file_size(large) / 1024);
  EXPECT_LT(all - one_cell, 6 * file_kib)
      << "a report of " << file_kib << " KiB took " << all - one_cell << " KiB more than one of one cell";
}

TEST_F(Hostile, ASizeBoundCannotBeSwitchedOff) {
  // Any existing file serves as the model: the bounds are checked before it is loaded.
  for (const std::string bound : {"-1", "18446744073709551616", "0"})
    for (const std::string option : {"--max-input-bytes", "--max-model-bytes"}) {
      const auto result = run("model " + small_report() + " --input x:f32[60000,60000] " + option + " " + bound);
      EXPECT_EQ(result.exit_code, 2) << option << " " << bound << ": " << result.output;
      EXPECT_NE(result.output.find("give a size in bytes from 1 to 2^64 - 1"), std::string::npos) << result.output;
    }
  const auto small = run("model " + small_report() + " --input x:f32[4,8] --max-input-bytes 100");
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.output.find("128 bytes of generated inputs, over the limit of 100 bytes"), std::string::npos)
      << small.output;
}

TEST_F(Hostile, ReproNeverReplacesAFileOfTheUsers) {
  fs::create_directories(path("out"));
  ASSERT_EQ(run("repro " + small_report() + " '*' -o " + path("first")).exit_code, 0);
  std::string name;
  for (const auto& entry : fs::directory_iterator(path("first"))) name = entry.path().filename().string();
  const auto mine = write("out/" + name, "the user's own file");
  const auto result = run("repro " + small_report() + " '*' -o " + path("out"));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("exists and is not a folder this command wrote"), std::string::npos) << result.output;
  EXPECT_EQ(slurp(mine), "the user's own file");
  // An earlier export's folder is the tool's own: replaced.
  EXPECT_EQ(run("repro " + small_report() + " '*' -o " + path("first")).exit_code, 0);
}

TEST_F(Hostile, AWriteThatFailsEndsTheExportWithThePathAndTheError) {
  // A file size limit stands in for a full disk: the inputs (16 MiB) cannot be written.
  const auto result = run("repro " + small_report() + " '*' -o " + path("out"), "trap '' XFSZ; ulimit -f 4096;");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("inputs.pt: write failed: File too large"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("skipped"), std::string::npos) << result.output;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(path("out"))) left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty());
}

TEST_F(Hostile, AnInterpreterThatHangsIsStoppedWithWhatItStarted) {
  // A wrapper script whose own child hangs: stopping the script alone left the child running.
  const auto child = path("child.pid");
  const auto python = write("python-with-a-child", "#!/bin/sh\nsleep 1000 &\necho $! > " + child + "\nwait\n");
  ::chmod(python.c_str(), 0755);
  const auto result = run("selftest --device cpu --python " + python, "REPRO_AUDIT_PYTHON_CHECK_SECONDS=2");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("did not answer within 2 s"), std::string::npos) << result.output;
  const auto pid = std::stoi(slurp(child));
  for (int i = 0; i < 50 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(pid)) << "the interpreter's child " << pid << " outlived it";
  if (alive(pid)) ::kill(pid, SIGKILL);
}

}  // namespace
