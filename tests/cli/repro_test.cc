// `repro` and `selftest --python` on the real binary with the Python next to libtorch: the exported
// scripts run with Python torch alone and agree with the report; every probe's Python twin gives its bits.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "cli_tools.h"
#include "python_fixtures.h"
#include "python_modules.h"
#include "test_paths.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

std::string python() { return test_paths::kPython; }

class ReproCommand : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!test_paths::python_has_modules(python(), "torch xxhash"))
      GTEST_SKIP() << python() << " cannot import torch and xxhash (tools/dev test installs xxhash next to torch)";
  }
};

// A script's run of a cell the report found nondeterministic: a race needs its 2 threads to run at once,
// which on a machine busy with other tests they may not, so a run that saw none is tried again (at most 3).
Result run_script(const std::string& command, const std::string& report_verdict) {
  auto ran = shell(command);
  for (int attempt = 1; attempt < 3 && ran.exit_code != 0 && report_verdict == "nondeterministic"; ++attempt)
    ran = shell(command);
  return ran;
}

// Every probe's Python twin, on the CPU under strict with one thread, against the C++ worker. The first
// test of the suite, so CTest starts it first: it is the longest. Only the twins: the controls, whose
// timed one needs a quiet machine, are run alone in timing_test.cc.
TEST_F(ReproCommand, EveryProbeMatchesItsPythonTwinBitForBit) {
  const auto result = run("selftest --device cpu --python " + python() + " --python-only");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Python parity passed"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("control.timed_cost"), std::string::npos) << "the controls ran";
  EXPECT_EQ(result.output.find("selftest passed"), std::string::npos) << "the controls were said to pass";
  EXPECT_NE(result.output.find("path of interpolate "), std::string::npos) << "the declared paths were not checked";
}

// --probe narrows the twins checked to those named; a name without a twin is bad usage, naming it.
TEST_F(ReproCommand, TheTwinsOfTheNamedProbesAloneWithProbe) {
  const auto result = run("selftest --device cpu --python " + python() + " --python-only --probe cumsum");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Python parity: 1 probes"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cumsum/f32@cpu"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("index_add/"), std::string::npos) << "a probe not named was checked";
  EXPECT_EQ(result.output.find("path of "), std::string::npos) << "another probe's declared path was checked";
  const auto unknown = run("selftest --device cpu --python " + python() + " --python-only --probe no_such_probe");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--probe no_such_probe: no such probe"), std::string::npos) << unknown.output;
  // The name is checked before the interpreter, whose check imports torch: a bad name is refused at once.
  const auto first =
      run("selftest --device cpu --python " + path("no-python") + " --python-only --probe no_such_probe");
  EXPECT_EQ(first.exit_code, 2) << first.output;
  EXPECT_NE(first.output.find("--probe no_such_probe: no such probe"), std::string::npos) << first.output;
}

TEST_F(ReproCommand, ExportsScriptsThatAgreeWithTheReportWithAndWithoutXxhash) {
  // index_put_ with accumulate diverges on 2 threads and is deterministic under strict. The race needs
  // both threads at once: an audit that saw none is tried again (at most 3 audits).
  const auto report = path("report.json");
  const auto racy_key = "index_put_accumulate/f32@cpu";
  json cells;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto audit =
        run("run --device cpu --probe index_put_accumulate/f32 --probe index_add/f32 --profile default "
            "--profile strict --axis threads=2 --repeats 10 --no-cost --json " +
            report);
    ASSERT_LE(audit.exit_code, 1) << audit.output;
    cells = json::parse(slurp(report)).at("cells");
    const auto racy = std::find_if(cells.begin(), cells.end(), [&](const json& c) { return c.at("key") == racy_key; });
    ASSERT_NE(racy, cells.end());
    if (racy->at("verdict") == "nondeterministic") break;
  }
  // Through copies of the programs that log what starts repro-audit-cpu: CPU cells' inputs are made there,
  // without libtorch's CUDA half.
  const auto programs = programs_logging_cpu_starts(path("programs"));
  const auto exported =
      shell((programs.empty() ? binary() : programs) + " repro " + report + " 'index_*' -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("4 of 4 cell(s) exported"), std::string::npos) << exported.output;
  if (!programs.empty()) EXPECT_EQ(slurp(path("programs/cpu-starts.log")), "export-inputs\n");
  int nondeterministic = 0;
  std::map<std::string, std::string> verdict_of_folder;
  // The first script runs as a user runs it, in the report's 2 processes; the others in one (a second
  // process only imports torch again: the cross-process path is the first one's).
  std::string processes;
  for (const auto& cell : cells) {
    const std::string key = cell.at("key");
    std::string name;  // the folder repro names after the key
    for (const char c : key)
      name += std::isalnum(static_cast<unsigned char>(c)) || std::string("-_.=").find(c) != std::string::npos ? c : '_';
    const auto folder = path("out/" + name);
    verdict_of_folder[folder] = cell.at("verdict");
    ASSERT_TRUE(fs::exists(fs::path(folder) / "inputs.pt"));
    const auto readme = slurp(fs::path(folder) / "README.md");
    EXPECT_NE(readme.find(key), std::string::npos);
    const auto ran = run_script(python() + " " + folder + "/repro.py --json" + processes, cell.at("verdict"));
    ASSERT_EQ(ran.exit_code, 0) << key << "\n" << ran.output << "\n" << slurp(fs::path(folder) / "repro.py");
    const auto answer = json::parse(ran.output.substr(ran.output.rfind("\n{") + 1));
    EXPECT_NE(answer.at("detail").get<std::string>().find(processes.empty() ? "in 2 process(es)" : "in 1 process(es)"),
              std::string::npos)
        << key << ": " << answer.at("detail");
    EXPECT_EQ(answer.at("verdict"), cell.at("verdict")) << key;
    EXPECT_TRUE(answer.at("agrees").get<bool>()) << key;
    if (answer.at("verdict") == "nondeterministic") ++nondeterministic;
    processes = " --processes 1";
    if (answer.at("verdict") == "deterministic") {
      EXPECT_EQ(answer.at("digest"), cell.at("digest")) << key;
    }
  }
  EXPECT_EQ(nondeterministic, 1) << "index_put_ accumulate on 2 threads, default settings: no race in 3 audits";
  // Without xxhash: the runs compared through their canonical bytes, the verdict still the report's. One
  // cell of each verdict, in one process each (the race is within a process; the digest path is the
  // same code for every cell, and the processes were checked above).
  fs::create_directories(path("fake"));
  std::ofstream(path("fake/xxhash.py")) << "raise ImportError('no xxhash here')\n";
  std::set<std::string> verdicts_seen;
  for (const auto& [folder, verdict] : verdict_of_folder) {
    if (!verdicts_seen.insert(verdict).second) continue;
    // A race needs its threads at once: the racy cell's script runs 10 times per try, not 2.
    const auto runs = verdict == "nondeterministic" ? " --runs 10" : "";
    const auto ran = run_script(
        "PYTHONPATH=" + path("fake") + " " + python() + " " + folder + "/repro.py --processes 1" + runs, verdict);
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_NE(ran.output.find("digest   none: `pip install xxhash`"), std::string::npos) << ran.output;
    EXPECT_NE(ran.output.find("verdict  agrees with the report (verdicts compared; digests not)"), std::string::npos)
        << ran.output;
  }
}

TEST_F(ReproCommand, APatternMatchingNoCellIsAnError) {
  const auto report = shared_report("small", kSmallAudit);
  ASSERT_FALSE(report.empty());
  const auto result = run("repro " + report + " 'nothing/*' -o " + path("out"));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("no cell key matches 'nothing/*'"), std::string::npos) << result.output;
}

// A TorchScript model whose forward accumulates 2^20 values into 1024 slots with index_put: racy on 2
// threads. Its forward is reproduced bit for bit where it is deterministic, and the op where its
// divergence starts is reproduced alone.
TEST_F(ReproCommand, ExportsAModelsForwardAndTheOpWhereItsDivergenceStarts) {
  const std::string make = R"(import sys
import torch
class Scatter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 64)
        self.head = torch.nn.Linear(64, 8)
    def forward(self, x):
        flat = torch.relu(self.fc1(x)).flatten().repeat(16)
        index = torch.arange(flat.numel()) * 7919 % 1024
        slots = torch.zeros(1024, dtype=flat.dtype).index_put((index,), flat, accumulate=True)
        return self.head(slots.view(16, 64))
torch.manual_seed(0)
torch.jit.script(Scatter()).save(sys.argv[1])
)";
  const auto model = path("scatter.pt");
  ASSERT_TRUE(python_fixture(folder_, "make.py", make, python(), model));
  const auto report = path("report.json");
  // The race needs both threads at once, in a run that records per-op digests for an origin to be named
  // (a busy machine may give it neither): an audit that named none is tried again (at most 3 audits).
  const auto racy_cell = [&] {
    const auto cells = json::parse(slurp(report)).at("cells");
    const auto it = std::find_if(cells.begin(), cells.end(),
                                 [](const json& c) { return c.at("key") == "model.scatter/forward@cpu"; });
    return it == cells.end() ? json() : *it;
  };
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto audit = run("model " + model +
                           " --input x:f32[1024,64] --profile default --profile strict --repeats 6 --json " + report);
    ASSERT_LE(audit.exit_code, 1) << audit.output;
    if (racy_cell().contains("origin")) break;
  }
  const auto exported = run("repro " + report + " model --model " + model + " -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto strict = path("out/model.scatter_forward_cpu_deterministic_algorithms=on");
  // One Python process: the digest is what is compared here (every script of parity runs in one too).
  const auto ran = shell(python() + " " + strict + "/repro.py --processes 1 --json");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const auto answer = json::parse(ran.output.substr(ran.output.rfind("\n{") + 1));
  EXPECT_EQ(answer.at("verdict"), "deterministic");
  EXPECT_TRUE(answer.at("agrees").get<bool>());  // the report's digest, from Python
  // A training run with an SGD step, from Python: the same loss, gradients and parameters.
  const auto trained = path("trained.json");
  ASSERT_EQ(run("model " + model +
                " --input x:f32[1024,64] --train --steps 1 --profile strict --repeats 2 --no-cost --json " + trained)
                .exit_code,
            0);
  ASSERT_EQ(run("repro " + trained + " model --model " + model + " -o " + path("trained")).exit_code, 0);
  const auto training =
      shell(python() + " " + path("trained/model.scatter_train.sgd1_cpu_deterministic_algorithms=on") +
            "/repro.py --processes 1 --json");
  ASSERT_EQ(training.exit_code, 0) << training.output;
  const auto trained_answer = json::parse(training.output.substr(training.output.rfind("\n{") + 1));
  EXPECT_TRUE(trained_answer.at("outputs").contains("params.step1")) << trained_answer.dump();
  EXPECT_TRUE(trained_answer.at("outputs").contains("grad.fc1.weight")) << trained_answer.dump();
  const auto racy = path("out/model.scatter_forward_cpu");
  const auto cell = racy_cell();
  ASSERT_FALSE(cell.is_null());
  if (cell.at("verdict") != "nondeterministic")
    GTEST_SKIP() << "the two threads did not race in this audit (a busy machine): no origin to export";
  ASSERT_TRUE(cell.contains("origin")) << "no origin named in 3 audits: " << cell.value("origin_note", "");
  ASSERT_TRUE(fs::exists(racy + "/origin/repro.py")) << slurp(racy + "/README.md");
  EXPECT_NE(slurp(racy + "/README.md").find("python origin/repro.py"), std::string::npos);
  auto origin = shell(python() + " " + racy + "/origin/repro.py --runs 6");
  for (int attempt = 1; attempt < 3 && origin.output.find("here     nondeterministic") == std::string::npos; ++attempt)
    origin = shell(python() + " " + racy + "/origin/repro.py --runs 6");  // the race, again on a busy machine
  EXPECT_NE(origin.output.find("aten::_index_put_impl_, the op where the divergence"), std::string::npos)
      << origin.output;
  EXPECT_NE(origin.output.find("here     nondeterministic"), std::string::npos) << origin.output;
}

// What a model file is comes from its archive, as the worker loads it, never from its name: a
// TorchScript module saved as "net.pt2" is scripted with torch.jit.load.
TEST_F(ReproCommand, AModelIsScriptedByWhatItsArchiveHoldsNotByItsName) {
  const auto model = path("net.pt2");
  ASSERT_TRUE(scripted_linear(folder_, python(), model));
  const auto report = path("report.json");
  const auto audit =
      run("model " + model + " --input x:f32[2,8] --profile strict --repeats 2 --no-cost --json " + report);
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  const auto exported = run("repro " + report + " model --model " + model + " -o " + path("out"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const auto script = slurp(path("out/model.net_forward_cpu_deterministic_algorithms=on/repro.py"));
  EXPECT_NE(script.find("torch.jit.load(MODEL_PATH"), std::string::npos);
  EXPECT_EQ(script.find("aoti_load_package"), std::string::npos);
  EXPECT_NE(script.find("(TorchScript)"), std::string::npos);
}

}  // namespace
