// A report's py cell names an interpreter, a file and a module path: none of it is run by a reader.
// A crafted report points at a shim interpreter and a planted module that each leave a marker when
// run; every command that reads reports leaves no marker, `explain` re-runs the cell only with the
// interpreter and callable named on its command line, and `repro` says what its script will run.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli_tools.h"
#include "python_modules.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class ReportPyCell : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    python_ = test_paths::kPython;
    if (!test_paths::python_has_modules(python_, "torch xxhash"))
      GTEST_SKIP() << "no Python with torch and xxhash next to libtorch";
    fs::create_directories(path("mine"));
    // The user's step and its audit, made once for every test of the build (read only): the step beside
    // the report, in a folder of their own.
    report_ = shared_report_made_by("py-step-make", [&](const fs::path& folder, const std::string& file) {
      fs::create_directories(folder / "py-step");
      std::ofstream(folder / "py-step" / "step.py")
          << "import torch\ndef make(seed=0):\n    return torch.arange(8.0) * 3\n";
      const auto audited = run("py " + (folder / "py-step" / "step.py").string() +
                               ":make --device cpu --profile default --axis threads=1 --repeats 2 --processes 1 "
                               "--no-cost --per-op off --quiet --python " +
                               python_ + " --json " + file);
      EXPECT_EQ(audited.exit_code, 0) << audited.output;
      return audited.exit_code == 0;
    });
    ASSERT_FALSE(report_.empty());
    callable_ = (fs::path(report_).parent_path() / "py-step" / "step.py").string();
    // The crafted report: a shim interpreter and a planted module in a folder of its own.
    fs::create_directories(path("planted"));
    shim_ = write("planted/python3", "#!/bin/sh\ntouch " + path("shim-ran") + "\nexec " + python_ + " \"$@\"\n");
    ::chmod(shim_.c_str(), 0755);
    planted_ = write("planted/step.py", "import pathlib, torch\npathlib.Path('" + path("module-ran") +
                                            "').touch()\ndef make(seed=0):\n    return torch.arange(8.0)\n");
    auto report = json::parse(slurp(report_));
    const auto craft = [&](json& model) {
      model["python"] = shim_;
      model["callable"] = planted_ + ":make";
      model["path"] = planted_;
      model["search_path"] = path("planted");
      model["compile_cache"] = path("planted");
    };
    craft(report.at("config").at("models").at(0));
    for (auto& cell : report.at("cells")) craft(cell.at("model"));
    std::ofstream(path("crafted.json")) << report.dump(1);
  }
  void expect_nothing_ran(const std::string& after) {
    EXPECT_FALSE(fs::exists(path("shim-ran"))) << "the report's interpreter ran: " << after;
    EXPECT_FALSE(fs::exists(path("module-ran"))) << "the report's module was imported: " << after;
  }
  std::string python_, report_, callable_, shim_, planted_;
};

TEST_F(ReportPyCell, NoReaderRunsTheInterpreterOrModuleAReportNames) {
  const auto crafted = path("crafted.json");
  for (const auto& command :
       {"show " + crafted, "compare " + crafted + " " + report_, "baseline " + crafted + " -o " + path("base.yaml"),
        "gate --baseline " + path("base.yaml") + " --report " + crafted}) {
    const auto result = run(command);
    EXPECT_NE(result.exit_code, 2) << command << "\n" << result.output;
    expect_nothing_ran(command);
  }
  const auto exported = run("repro " + crafted + " '*' -o " + path("out"));
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  expect_nothing_ran("repro");
  // Before anyone runs it, the output and the README say which file and which interpreter it runs.
  for (const auto& text : {exported.output, slurp(path("out/py.step-make_call_cpu_threads=1/README.md"))}) {
    EXPECT_NE(text.find("imports the file " + planted_), std::string::npos) << text;
    EXPECT_NE(text.find("(the audit's was " + shim_ + ")"), std::string::npos) << text;
  }
  EXPECT_EQ(slurp(path("out/py.step-make_call_cpu_threads=1/repro.py")).find(path("planted") + "\""), std::string::npos)
      << "the report's compile cache reached the script";
}

TEST_F(ReportPyCell, ExplainNeedsTheInterpreterAndCallableOnItsCommandLine) {
  const auto crafted = path("crafted.json");
  const auto bare = run("explain " + crafted);
  EXPECT_EQ(bare.exit_code, 2) << bare.output;
  EXPECT_NE(bare.output.find("needs --python PYTHON and --callable FILE.py:make"), std::string::npos) << bare.output;
  EXPECT_EQ(bare.output.find("nothing to explain"), std::string::npos) << bare.output;
  const auto other = write("mine/other.py", "def other():\n    pass\n");
  const auto mismatch = run("explain " + crafted + " --python " + python_ + " --callable " + other + ":other");
  EXPECT_EQ(mismatch.exit_code, 2) << mismatch.output;
  EXPECT_NE(mismatch.output.find("runs the callable 'make' (" + planted_ + ":make), not 'other'"), std::string::npos)
      << mismatch.output;
  expect_nothing_ran("explain");
  // The user's callable and interpreter: the cell runs here, as the report found it.
  const auto named =
      run("explain " + crafted + " --repeats 2 --python " + python_ + " --callable " + callable_ + ":make");
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_NE(named.output.find("nothing to explain"), std::string::npos) << named.output;
  expect_nothing_ran("explain --python --callable");
}

// A py cell that no longer starts here explains nothing: explain says why and exits 2, never "nothing
// to explain" with 0.
TEST_F(ReportPyCell, ExplainOfACellThatCannotRunHereSaysWhy) {
  const auto broken = write("mine/broken/step.py", "");
  fs::remove(broken);
  fs::create_directories(path("mine/broken"));
  write("mine/broken/step.py", "import no_such_module_anywhere\ndef make():\n    pass\n");
  const auto result =
      run("explain " + report_ + " --repeats 2 --python " + python_ + " --callable " + broken + ":make");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("could not be run here"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cannot explain py.step-make/call@cpu|threads=1: error here: "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("no_such_module_anywhere"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("nothing to explain"), std::string::npos) << result.output;
  // A torch that is there but breaks on import: the check only finds it, the worker that re-runs the cell
  // imports it and fails the command as the machine's failure, naming it; no cell is judged.
  fs::create_directories(path("broken-torch/torch"));
  write("broken-torch/torch/__init__.py", "raise ImportError('a torch built for another Python')\n");
  const auto broken_torch =
      write("python-broken-torch", "#!/bin/sh\nPYTHONPATH=" + path("broken-torch") + " exec " + python_ + " \"$@\"\n");
  ::chmod(broken_torch.c_str(), 0755);
  const auto unimportable =
      run("explain " + report_ + " --repeats 2 --python " + broken_torch + " --callable " + callable_ + ":make");
  EXPECT_EQ(unimportable.exit_code, 2) << unimportable.output;
  EXPECT_NE(unimportable.output.find("this Python cannot import torch: ImportError: a torch built for another Python"),
            std::string::npos)
      << unimportable.output;
  EXPECT_EQ(unimportable.output.find("nothing to explain"), std::string::npos) << unimportable.output;
  EXPECT_EQ(unimportable.output.find("--resume"), std::string::npos) << "explain has no --resume\n"
                                                                     << unimportable.output;
  // A callable whose file is gone is refused before anything runs.
  const auto gone =
      run("explain " + report_ + " --python " + python_ + " --callable " + path("mine/gone.py") + ":make");
  EXPECT_EQ(gone.exit_code, 2) << gone.output;
  EXPECT_NE(gone.output.find("does not exist"), std::string::npos) << gone.output;
}

}  // namespace
