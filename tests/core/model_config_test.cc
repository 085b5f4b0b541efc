// The models: config key, and a model's inputs as the command line and the config give them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/user_error.h"
#include "config/config.h"
#include "config/config_json.h"
#include "config/model_config.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

class ModelConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("repro-audit-model-config-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
    std::ofstream(folder_ / "net.pt") << "x";
    std::ofstream(folder_ / "inputs.pt") << "x";
  }
  void TearDown() override { fs::remove_all(folder_); }
  Config parse(const std::string& text) {
    return parse_config(text, (folder_ / "audit.yaml").string(), testing::test_catalogue());
  }
  std::string error_of(const std::string& text) {
    try {
      parse(text);
    } catch (const UserError& error) {
      return error.what();
    }
    return "no error";
  }
  fs::path folder_;
};

TEST_F(ModelConfig, ReadsModelsWithPathsRelativeToTheConfig) {
  const auto config = parse(R"(
models:
  - path: net.pt
    inputs: inputs.pt
    train: true
    steps: 3
    learning_rate: 0.1
    loss: sum
    per_op: false
  - path: net.pt
    name: net-small
    inputs:
      - x:f32[4,8]
      - ids:i64[4]
)");
  ASSERT_EQ(config.models.size(), 2u);
  const auto& net = config.models[0];
  EXPECT_EQ(net.name, "net");
  EXPECT_EQ(net.path, (folder_ / "net.pt").string());
  EXPECT_EQ(net.inputs_file, (folder_ / "inputs.pt").string());
  EXPECT_TRUE(net.train);
  EXPECT_EQ(net.steps, 3);
  EXPECT_EQ(net.learning_rate, 0.1);
  EXPECT_EQ(net.loss, LossKind::sum);
  EXPECT_FALSE(net.per_op);
  EXPECT_EQ(model_variant(net), "train.sgd3");
  const auto& small = config.models[1];
  EXPECT_EQ(small.name, "net-small");
  ASSERT_EQ(small.inputs.size(), 2u);
  EXPECT_EQ(to_string(small.inputs[1]), "ids:i64[4]");
  EXPECT_EQ(model_variant(small), "forward");
  // The config survives a journal: models included.
  const auto again = config_from_json(config_to_json(config), "journal");
  ASSERT_EQ(again.models.size(), 2u);
  EXPECT_EQ(again.models[0].steps, 3);
  EXPECT_EQ(to_string(again.models[1].inputs[0]), "x:f32[4,8]");
}

TEST_F(ModelConfig, BadModelsNameTheLineAndTheValidChoices) {
  EXPECT_NE(error_of("models:\n  - path: missing.pt\n    inputs: inputs.pt\n").find("audit.yaml:2"), std::string::npos);
  EXPECT_NE(error_of("models:\n  - path: missing.pt\n    inputs: inputs.pt\n").find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - path: net.pt\n").find("needs inputs"), std::string::npos);
  const auto dtype = error_of("models:\n  - path: net.pt\n    inputs:\n      - x:f8[4]\n");
  EXPECT_NE(dtype.find("audit.yaml:4"), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("valid dtypes: f32, f64"), std::string::npos) << dtype;
  const auto key = error_of("models:\n  - path: net.pt\n    inputs: inputs.pt\n    epochs: 3\n");
  EXPECT_NE(key.find("audit.yaml:4"), std::string::npos) << key;
  EXPECT_NE(key.find("valid keys: path, name, inputs"), std::string::npos) << key;
  EXPECT_NE(error_of("models:\n  - path: net.pt\n    inputs: inputs.pt\n    loss: mse\n").find("auto, sum, output"),
            std::string::npos);
  EXPECT_NE(error_of("models:\n  - {path: net.pt, inputs: inputs.pt}\n  - {path: net.pt, inputs: inputs.pt}\n")
                .find("two models are named 'net'"),
            std::string::npos);
  EXPECT_NE(error_of("models: []\n").find("non-empty list"), std::string::npos);
  // An empty path (here a tag with no value) is an error, not a filesystem exception.
  EXPECT_NE(error_of("models:\n  - path: !tag\n    inputs: inputs.pt\n").find("needs a path"), std::string::npos);
  EXPECT_NE(error_of("models:\n  - path: ''\n    inputs: inputs.pt\n").find("needs a path"), std::string::npos);
}

TEST(ModelInputs, NameDtypeAndShapeOrAClearError) {
  std::string error;
  auto input = parse_model_input("x:f32[4, 8]", 0, error);
  ASSERT_TRUE(input) << error;
  EXPECT_EQ(to_string(*input), "x:f32[4,8]");
  input = parse_model_input("bool[]", 2, error);
  ASSERT_TRUE(input) << error;
  EXPECT_EQ(to_string(*input), "input2:bool[]");
  for (const std::string bad : {"", "x", "x:f32", "x:f32[4", "x:f32[4,]", "x:f32[-1]", "1x:f32[4]", "x:f32[4][5]",
                                "x:f32[1234567890]", "x y:f32[4]", ":f32[4]"}) {
    error.clear();
    EXPECT_FALSE(parse_model_input(bad, 0, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  // Long input is refused in one pass, and the message stays short.
  const std::string long_text = "x:f32[" + std::string(100000, '1') + "]";
  EXPECT_FALSE(parse_model_input(long_text, 0, error));
  EXPECT_LT(error.size(), 200u);
}

TEST(ModelInputBytes, CountsEachDtypesBytesAndRefusesWhatOverflows) {
  EXPECT_EQ(model_input_bytes({"x", "f32", {4, 8}}), 128u);
  EXPECT_EQ(model_input_bytes({"x", "bf16", {3}}), 6u);
  EXPECT_EQ(model_input_bytes({"x", "bool", {}}), 1u);
  EXPECT_EQ(model_input_bytes({"x", "f64", {100000, 100000, 100000}}), 8'000'000'000'000'000u);
  EXPECT_EQ(model_input_bytes({"x", "f32", {999999999, 999999999, 999999999}}), std::nullopt);
}

}  // namespace
}  // namespace repro_audit
