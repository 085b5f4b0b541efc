// A report's model cell names a model file, and loading an AOTInductor package runs its shared library.
// A crafted report points at a package whose library leaves a marker when loaded: `explain` and `repro`
// load no model file a report names, only the one named by --model on their command line; nor an inputs
// file, only the one named by --inputs.
#include <nlohmann/json.hpp>

#include "cli_tools.h"
#include "python_fixtures.h"
#include "python_modules.h"

namespace {

using namespace testing_cli;
using nlohmann::json;

class ReportModelFile : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    python_ = test_paths::kPython;
    if (!test_paths::python_has_modules(python_, "torch")) GTEST_SKIP() << "no Python with torch next to libtorch";
    if (shell("command -v cc").exit_code != 0) GTEST_SKIP() << "no C compiler to build the package's library";
    ASSERT_TRUE(scripted_linear(folder_, python_, path("linear.pt")));
    const auto audited = run("model " + path("linear.pt") +
                             " --input x:f32[4,8] --profile strict --axis threads=1 --repeats 2 --processes 1 --quiet "
                             "--json " +
                             path("report.json"));
    ASSERT_EQ(audited.exit_code, 0) << audited.output;
    // An AOTInductor package as the loader reads it: its model library's constructor runs at dlopen.
    write("marker.c",
          "#include <stdio.h>\n__attribute__((constructor)) static void mark(void) {\n  FILE* f = fopen(\"" +
              path("loaded") + "\", \"w\");\n  if (f) fclose(f);\n}\n");
    ASSERT_EQ(shell("cc -shared -fPIC " + path("marker.c") + " -o " + path("model.so")).exit_code, 0);
    write("package.py", R"(import json, sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w") as package:
    package.writestr("evil/archive_format", "pt2")
    package.writestr("evil/archive_version", "0")
    package.writestr("evil/data/aotinductor/model/model.so", open(sys.argv[1], "rb").read())
    package.writestr("evil/data/aotinductor/model/model.cpp", "")
    package.writestr("evil/data/aotinductor/model/model_metadata.json", json.dumps({"AOTI_DEVICE_KEY": "cpu"}))
)");
    fs::create_directories(path("planted"));
    package_ = path("planted/evil.pt2");
    ASSERT_EQ(shell(python_ + " " + path("package.py") + " " + path("model.so") + " " + package_).exit_code, 0);
    auto report = json::parse(slurp(path("report.json")));
    report.at("config").at("models").at(0)["path"] = package_;
    for (auto& cell : report.at("cells"))
      if (cell.contains("model")) cell.at("model")["path"] = package_;
    std::ofstream(path("crafted.json")) << report.dump(1);
  }
  void expect_not_loaded(const std::string& after) {
    EXPECT_FALSE(fs::exists(path("loaded"))) << "the report's model package was loaded: " << after;
  }
  std::string python_, package_;
};

TEST_F(ReportModelFile, ExplainAndReproLoadNoModelFileAReportNames) {
  const auto crafted = path("crafted.json");
  for (const auto& command : {"explain " + crafted, "explain " + crafted + " " + path("report.json"),
                              "repro " + crafted + " model -o " + path("out")}) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(
        result.output.find("needs --model FILE naming its model (linear, the file " + package_ + " in the report)"),
        std::string::npos)
        << command << "\n"
        << result.output;
    expect_not_loaded(command);
  }
  // A file named on the command line that is no model of the report's is refused by name.
  const auto other = write("other.pt", "");
  const auto mismatch =
      run("repro " + crafted + " model --model " + path("linear.pt") + " --model " + other + " -o " + path("out"));
  EXPECT_EQ(mismatch.exit_code, 2) << mismatch.output;
  EXPECT_NE(mismatch.output.find("--model " + other + ": no model cell of " + crafted), std::string::npos)
      << mismatch.output;
  expect_not_loaded("repro --model other.pt");
}

TEST_F(ReportModelFile, TheModelNamedOnTheCommandLineIsTheOneLoaded) {
  const auto crafted = path("crafted.json");
  const auto explained = run("explain " + crafted + " --repeats 2 --model " + path("linear.pt"));
  EXPECT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_NE(explained.output.find("nothing to explain"), std::string::npos) << explained.output;
  const auto exported = run("repro " + crafted + " model --model " + path("linear.pt") + " -o " + path("out"));
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  const auto script = slurp(path("out/model.linear_forward_cpu_deterministic_algorithms=on_threads=1/repro.py"));
  EXPECT_NE(script.find(path("linear.pt")), std::string::npos) << script;
  EXPECT_EQ(script.find(package_), std::string::npos) << "the report's file reached the script";
  expect_not_loaded("explain and repro with --model");
}

// A report's model may name an inputs file, which libtorch's unpickler reads: it is read only when the
// command line names it with --inputs. The planted file is no torch.save file: a read of it would end
// the cell with an error saying so.
TEST_F(ReportModelFile, ExplainAndReproReadNoInputsFileAReportNames) {
  const auto planted = write("planted/inputs.pt", "read by the unpickler, this is an error");
  auto report = json::parse(slurp(path("report.json")));
  for (auto* model : {&report.at("config").at("models").at(0), &report.at("cells").at(0).at("model")}) {
    model->erase("inputs");
    (*model)["inputs_file"] = planted;
  }
  std::ofstream(path("inputs-crafted.json")) << report.dump(1);
  const auto crafted = path("inputs-crafted.json");
  for (const auto& command : {"explain " + crafted + " --model " + path("linear.pt"),
                              "repro " + crafted + " model --model " + path("linear.pt") + " -o " + path("out")}) {
    const auto result = run(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(result.output.find("needs --inputs FILE naming its inputs (the file " + planted + " in the report)"),
              std::string::npos)
        << command << "\n"
        << result.output;
    EXPECT_EQ(result.output.find("torch.save"), std::string::npos) << "the report's inputs file was read: " << command;
  }
  // The inputs file named on the command line is the one read, matched to the report's by file name.
  fs::create_directories(path("mine"));
  ASSERT_TRUE(python_fixture(folder_, "save_ones.py", "import sys, torch\ntorch.save(torch.ones(4, 8), sys.argv[1])\n",
                             python_, path("mine/inputs.pt")));
  const auto exported = run("repro " + crafted + " model --model " + path("linear.pt") + " --inputs " +
                            path("mine/inputs.pt") + " -o " + path("out"));
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  const auto other = run("repro " + crafted + " model --model " + path("linear.pt") + " --inputs " +
                         path("mine/inputs.pt") + " --inputs " + path("linear.pt") + " -o " + path("other"));
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("--inputs " + path("linear.pt") + ": no model cell of " + crafted), std::string::npos)
      << other.output;
}

}  // namespace
