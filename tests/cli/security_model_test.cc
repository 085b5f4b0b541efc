// Hostile inputs, `model`: a zip bomb, inputs too large to allocate, shapes past 64 bits; each refused
// with exit 2 and the option that raises its limit, before anything is loaded or allocated.
#include "cli_tools.h"
#include "python_fixtures.h"
#include "python_modules.h"
#include "test_paths.h"

namespace {

using namespace testing_cli;

class ModelLimits : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!test_paths::python_has_modules(std::string(test_paths::kPython), "torch"))
      GTEST_SKIP() << std::string(test_paths::kPython) << " cannot import torch";
    ASSERT_TRUE(scripted_linear(folder_, std::string(test_paths::kPython), path("linear.pt")));
  }
  Result audit(const std::string& arguments) {
    const auto begun = std::chrono::steady_clock::now();
    auto result = run("model " + arguments + " --profile strict --axis threads=1 --repeats 2 --processes 1 --quiet");
    elapsed = std::chrono::steady_clock::now() - begun;
    return result;
  }
  std::chrono::steady_clock::duration elapsed{};
};

TEST_F(ModelLimits, AZipBombIsRefusedBeforeItIsUnpacked) {
  // A TorchScript-looking archive: a real model's records plus one of 256 MiB of zeros, 256 KiB packed.
  write("bomb.py", R"(import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as model, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as bomb:
    for item in model.infolist():
        bomb.writestr(item.filename, model.read(item.filename))
    prefix = model.infolist()[0].filename.split("/")[0]
    bomb.writestr(prefix + "/extra/zeros", bytes(256 << 20))
)");
  ASSERT_EQ(
      shell(std::string(test_paths::kPython) + " " + path("bomb.py") + " " + path("linear.pt") + " " + path("bomb.pt"))
          .exit_code,
      0);
  ASSERT_LT(fs::file_size(path("bomb.pt")), 4u << 20);
  const auto refused = audit(path("bomb.pt") + " --input x:f32[4,8] --max-model-bytes 64M");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("unpacked"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--max-model-bytes raises it"), std::string::npos) << refused.output;
  const auto allowed = audit(path("bomb.pt") + " --input x:f32[4,8] --max-model-bytes 1G --json " + path("r.json"));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
}

TEST_F(ModelLimits, GeneratedInputsPastTheLimitAreRefusedBeforeTheyAreMade) {
  const auto large = audit(path("linear.pt") + " --input x:f32[60000,60000]");
  EXPECT_EQ(large.exit_code, 2) << large.output;
  EXPECT_NE(large.output.find("--input x:f32[60000,60000]: 13.4 GiB"), std::string::npos) << large.output;
  EXPECT_NE(large.output.find("--max-input-bytes raises it"), std::string::npos) << large.output;
  EXPECT_LT(elapsed, std::chrono::seconds(30));
  for (const auto& shape : {"[100000,100000,100000]", "[999999999,999999999,999999999]"}) {
    const auto huge = audit(path("linear.pt") + " --input x:f32" + shape);
    EXPECT_EQ(huge.exit_code, 2) << huge.output;
    EXPECT_EQ(huge.output.find("internal error"), std::string::npos) << huge.output;
  }
  const auto small_limit = audit(path("linear.pt") + " --input x:f32[4,8] --max-input-bytes 64");
  EXPECT_EQ(small_limit.exit_code, 2) << small_limit.output;
  const auto fits = audit(path("linear.pt") + " --input x:f32[4,8] --max-input-bytes 128");
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
}

}  // namespace
