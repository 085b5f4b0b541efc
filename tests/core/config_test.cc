#include "config/config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "config/config_json.h"
#include "common/user_error.h"
#include "hostile_inputs.h"
#include "test_catalogue.h"

namespace repro_audit {
namespace {

Config parse(const std::string& text) { return parse_config(text, "audit.yaml", testing::test_catalogue()); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Config, EmptyFileEqualsTheDefaults) {
  const auto config = parse("");
  EXPECT_EQ(config.device, "auto");
  EXPECT_TRUE(config.probes.empty());
  EXPECT_EQ(config.profiles, (std::vector<std::string>{"default", "strict", "strict-warn"}));
  EXPECT_EQ(config.axes.at("threads"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(config.repeats, 10);
  EXPECT_EQ(config.processes, 2);
  EXPECT_FALSE(config.full_matrix);
}

TEST(Config, ReadsEveryKey) {
  const auto config = parse(R"(
device: cpu
probes: {index_put_accumulate: [f64], sum: all}
profiles: [strict]
axes: {threads: [1, 2, 4]}
repeats: 7
warmup: 2
processes: 3
seed: 42
timeout: 30
fail_on: any
)");
  EXPECT_EQ(config.device, "cpu");
  ASSERT_EQ(config.probes.size(), 2u);
  EXPECT_EQ(config.probes[0].probe, "index_put_accumulate");
  EXPECT_EQ(config.probes[0].variants, std::vector<std::string>{"f64"});
  EXPECT_TRUE(config.probes[1].variants.empty());
  EXPECT_EQ(config.profiles, std::vector<std::string>{"strict"});
  EXPECT_EQ(config.axes.at("threads").size(), 3u);
  EXPECT_EQ(config.repeats, 7);
  EXPECT_EQ(config.warmup, 2);
  EXPECT_EQ(config.processes, 3);
  EXPECT_EQ(config.seed, 42u);
  EXPECT_EQ(config.timeout_seconds, 30);
  EXPECT_EQ(config.fail_on, FailOn::any);
}

TEST(Config, FailOnIsAnEnumWithItsNamesOnlyAtTheEdges) {
  for (const auto fail_on : {FailOn::contradiction, FailOn::any}) {
    EXPECT_EQ(fail_on_from_string(to_string(fail_on)), fail_on);
    Config config;
    config.fail_on = fail_on;
    EXPECT_EQ(config_from_json(config_to_json(config), "journal").fail_on, fail_on);
    EXPECT_EQ(parse(std::string("fail_on: ") + to_string(fail_on) + "\n").fail_on, fail_on);
  }
  EXPECT_EQ(config_to_json(Config{}).at("fail_on"), "contradiction");
  EXPECT_EQ(fail_on_from_string("all"), std::nullopt);
  EXPECT_NE(error_of("fail_on: all\n").find("audit.yaml:1:10: fail_on must be one of: contradiction, any"),
            std::string::npos)
      << error_of("fail_on: all\n");
  auto json = config_to_json(Config{});
  json["fail_on"] = "all";
  try {
    config_from_json(json, "journal/header.json");
    ADD_FAILURE() << "an unknown fail_on was accepted";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(),
                 "journal/header.json: malformed config: fail_on 'all' is not one of: contradiction, any");
  }
}

// New audits make portable inputs; an older scheme is asked for by number, and a journal or report
// config that records none was written with ATen's generator.
TEST(Config, TheInputSchemeIsPortableByDefaultAndOlderFilesReadAsAtensGenerator) {
  EXPECT_EQ(parse("").input_scheme, InputScheme::portable);
  EXPECT_EQ(parse("input_scheme: 1\n").input_scheme, InputScheme::aten);
  EXPECT_EQ(config_to_json(Config{}).at("input_scheme"), 2);
  EXPECT_NE(error_of("input_scheme: 3\n").find("audit.yaml:1:15: input_scheme must be"), std::string::npos)
      << error_of("input_scheme: 3\n");
  Config old;
  old.input_scheme = InputScheme::aten;
  EXPECT_EQ(config_from_json(config_to_json(old), "journal").input_scheme, InputScheme::aten);
  auto json = config_to_json(Config{});
  json.erase("input_scheme");
  EXPECT_EQ(config_from_json(json, "journal").input_scheme, InputScheme::aten);
  json["input_scheme"] = 7;
  EXPECT_THROW(config_from_json(json, "journal"), UserError);
}

TEST(Config, MatrixSweepsTheProductOfAxes) {
  const auto config = parse("matrix: {deterministic_algorithms: [off, on], threads: [1, 2]}\n");
  EXPECT_TRUE(config.full_matrix);
  EXPECT_EQ(config.axes.at("deterministic_algorithms"), (std::vector<std::string>{"off", "on"}));
}

TEST(Config, UnknownProbeNamesLineColumnAndChoices) {
  const auto message = error_of("repeats: 3\nprobes: [sum, index_ad]\n");
  EXPECT_NE(message.find("audit.yaml:2:15: unknown probe 'index_ad'"), std::string::npos) << message;
  EXPECT_NE(message.find("valid probes: index_put_accumulate, sum"), std::string::npos) << message;
}

TEST(Config, UnknownKeySettingValueProfileAndVariant) {
  EXPECT_NE(error_of("repeat: 3\n").find("audit.yaml:1:1: unknown key 'repeat'; valid keys: device"),
            std::string::npos);
  EXPECT_NE(error_of("axes: {thread: [1]}\n").find("1:8: unknown setting 'thread'; valid settings: allow_tf32"),
            std::string::npos);
  EXPECT_NE(error_of("axes: {deterministic_algorithms: [maybe]}\n").find("valid values: off, on, warn"),
            std::string::npos);
  EXPECT_NE(
      error_of("profiles: [default, lenient]\n").find("1:21: unknown profile 'lenient'; valid profiles: cudnn-pinned"),
      std::string::npos);
  EXPECT_NE(error_of("probes: {sum: [f16]}\n").find("unknown variant 'f16' of probe 'sum'; valid variants: f32"),
            std::string::npos);
  EXPECT_NE(error_of("repeats: many\n").find("1:10: repeats must be an integer from 1 to 100000"), std::string::npos);
  EXPECT_NE(error_of("device: tpu\n").find("valid devices: auto, cpu, cuda, cuda:N"), std::string::npos);
  EXPECT_NE(error_of("profiles: [strict]\nmatrix: {threads: [1]}\n").find("either profiles or matrix"),
            std::string::npos);
}

TEST(Config, MalformedYamlNamesThePosition) {
  const auto message = error_of("probes: [sum\nrepeats: 3\n");
  EXPECT_EQ(message.rfind("audit.yaml:", 0), 0u) << message;
}

TEST(Config, MissingFileIsAUserError) {
  EXPECT_THROW(load_config_file("/nonexistent/audit.yaml", testing::test_catalogue()), UserError);
}

std::string file_error_of(const std::string& path) {
  try {
    load_config_file(path, testing::test_catalogue());
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Config, AFileThatCannotBeReadIsAnErrorNotTheDefaults) {
  const auto folder = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(file_error_of(folder), folder + ": cannot read the config: Is a directory");
  if (std::filesystem::exists("/proc/self/mem"))
    EXPECT_EQ(file_error_of("/proc/self/mem"), "/proc/self/mem: cannot read the config: Input/output error");
}

TEST(Config, AnEndlessDeviceIsRefusedUnread) {
  EXPECT_EQ(file_error_of("/dev/zero"), "/dev/zero: cannot read the config: is a character device, not a regular file");
}

TEST(Config, DuplicateKeysNameTheSecondOne) {
  EXPECT_EQ(error_of("repeats: 2\nrepeats: 3\n"), "audit.yaml:2:1: duplicate key 'repeats' (first at line 1)");
  EXPECT_EQ(error_of("probes: {sum: [f32], sum: all}\n"), "audit.yaml:1:22: duplicate key 'sum' (first at line 1)");
  EXPECT_EQ(error_of("axes:\n  threads: [1]\n  threads: [2]\n"),
            "audit.yaml:3:3: duplicate key 'threads' (first at line 2)");
}

TEST(Config, ASecondDocumentIsAnError) {
  EXPECT_EQ(error_of("repeats: 2\n---\nrepeats: 3\n"),
            "audit.yaml:2:1: a second YAML document starts here; the file must hold one document");
  EXPECT_EQ(error_of("---\nrepeats: 2\n"), "no error");
}

TEST(Config, DeepNestingAndAliasBombsStopAtLoad) {
  EXPECT_EQ(error_of("probes: " + testing::nested_lists(100000)), "audit.yaml:1:72: YAML nested deeper than 64 levels");
  const auto bomb = error_of("axes:\n" + testing::alias_bomb("  "));
  EXPECT_NE(bomb.find("aliases expand to more than"), std::string::npos) << bomb;
  EXPECT_EQ(bomb.rfind("audit.yaml:", 0), 0u) << bomb;
}

}  // namespace
}  // namespace repro_audit
