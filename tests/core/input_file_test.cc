#include "common/input_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/user_error.h"
#include "config/yaml_reader.h"
#include "hostile_inputs.h"

namespace repro_audit {
namespace {

using nlohmann::json;
using testing::alias_bomb;
using testing::nested_lists;

template <typename Load>
std::string error_of(Load&& load) {
  try {
    load();
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("repro-audit-input-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(InputFile, ReadsTheWholeFileByteForByte) {
  std::string text(3 * (1 << 20) + 5, 'x');  // across the reader's 1 MiB chunks
  text[7] = '\0';
  text.back() = 'y';
  EXPECT_EQ(read_input_file(write("a.yaml", text), "config", kMaxConfigBytes), text);
  EXPECT_EQ(read_input_file(write("empty.yaml", ""), "config", kMaxConfigBytes), "");
}

TEST_F(InputFile, AFolderOrAMissingFileIsAnErrorNotAnEmptyFile) {
  EXPECT_EQ(error_of([&] { read_input_file(dir_.string(), "config", kMaxConfigBytes); }),
            dir_.string() + ": cannot read the config: Is a directory");
  EXPECT_EQ(error_of([&] { read_input_file((dir_ / "absent").string(), "gate policy", kMaxConfigBytes); }),
            (dir_ / "absent").string() + ": cannot read the gate policy: No such file or directory");
}

TEST_F(InputFile, AReadErrorIsAnErrorNotAnEmptyFile) {
  // Opens, but reading at offset 0 (unmapped) fails: an ifstream took this for an empty config.
  if (!std::filesystem::exists("/proc/self/mem")) GTEST_SKIP() << "no /proc/self/mem";
  EXPECT_EQ(error_of([] { read_input_file("/proc/self/mem", "config", kMaxConfigBytes); }),
            "/proc/self/mem: cannot read the config: Input/output error");
}

TEST_F(InputFile, StopsOneBytePastTheLimit) {
  EXPECT_EQ(read_input_file(write("at.json", std::string(100, 'a')), "report", 100).size(), 100u);
  const auto over = write("over.json", std::string(101, 'a'));
  EXPECT_EQ(error_of([&] { read_input_file(over, "report", 100); }),
            over + ": larger than 100 bytes, the limit for a report");
  // An endless device is refused before a byte is read, not read until the limit.
  EXPECT_EQ(error_of([] { read_input_file("/dev/zero", "config", std::size_t{1} << 20); }),
            "/dev/zero: cannot read the config: is a character device, not a regular file");
}

TEST(ParseJsonInput, ParsesWhatJsonParseParses) {
  const std::string text = R"({"a": [1, -2, 3.5, true, null, "x\"]"], "b": {"c": {}}, "d": 18446744073709551615})";
  EXPECT_EQ(parse_json_input(text, "r.json"), json::parse(text));
}

TEST(ParseJsonInput, InvalidJsonNamesTheSourceLineAndColumnAndWhatWasExpected) {
  EXPECT_EQ(error_of([] { parse_json_input("{\"a\": ", "r.json"); }),
            "r.json:1:7: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', "
            "or a literal");
  EXPECT_EQ(error_of([] { parse_json_input("{}\n x", "r.json"); }),
            "r.json:2:2: invalid JSON: syntax error while parsing value - invalid literal; last read: '{}<U+000A> x'; "
            "expected end of input");
}

TEST(ParseJsonInput, NestingIsLimitedAndTheOffsetNamed) {
  EXPECT_NO_THROW(parse_json_input(nested_lists(kMaxNestingDepth), "r.json"));
  EXPECT_EQ(error_of([&] { parse_json_input(nested_lists(kMaxNestingDepth + 1), "r.json"); }),
            "r.json: byte 65: JSON nested deeper than 64 levels");
  // A million levels once overflowed the stack of whatever walked them; now parsing stops at 65.
  EXPECT_EQ(error_of([] { parse_json_input("{\"a\\\"[\": " + std::string(1000000, '['), "r.json"); }),
            "r.json: byte 73: JSON nested deeper than 64 levels");
}

TEST(ParseJsonInput, StreamsTheElementsOfOneRootArray) {
  std::vector<json> taken;
  const auto result =
      parse_json_input(R"({"a": 1, "cells": [{"x": [1, {"y": 2}]}, 2, [3]], "b": {"cells": [5]}, "z": "cells"})",
                       "r.json", "cells", [&](json&& cell) { taken.push_back(std::move(cell)); });
  EXPECT_EQ(result, json::parse(R"({"a": 1, "cells": [], "b": {"cells": [5]}, "z": "cells"})"));
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0], json::parse(R"({"x": [1, {"y": 2}]})"));
  EXPECT_EQ(taken[1], 2);
  EXPECT_EQ(taken[2], json::parse("[3]"));
  // Only the root's array of that name is streamed.
  taken.clear();
  EXPECT_EQ(parse_json_input(R"([{"cells": [1]}])", "r.json", "cells", [&](json&& cell) { taken.push_back(cell); }),
            json::parse(R"([{"cells": [1]}])"));
  EXPECT_TRUE(taken.empty());
}

TEST(IsDigest, ThirtyTwoLowerCaseHexDigits) {
  EXPECT_TRUE(is_digest("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(is_digest("0123456789ABCDEF0123456789ABCDEF"));
  EXPECT_FALSE(is_digest(std::string(31, 'a')));
  EXPECT_FALSE(is_digest(std::string(33, 'a')));
  EXPECT_FALSE(is_digest(std::string(32, 'g')));
  EXPECT_FALSE(is_digest(""));
}

std::string yaml_error(const std::string& text) {
  return error_of([&] { YamlReader("c.yaml").load(text); });
}

TEST(YamlReader, RejectsDuplicateKeysAtTheSecondOne) {
  EXPECT_EQ(yaml_error("a: 1\nb: 2\na: 3\n"), "c.yaml:3:1: duplicate key 'a' (first at line 1)");
  EXPECT_EQ(yaml_error("x:\n  - {k: 1, j: 2, k: 3}\n"), "c.yaml:2:18: duplicate key 'k' (first at line 2)");
  EXPECT_EQ(yaml_error("x: {'a': 1, a: 2}\n"), "c.yaml:1:13: duplicate key 'a' (first at line 1)");
  // The same key in different maps, or as a value, is no duplicate.
  EXPECT_EQ(yaml_error("a: {a: a}\nb: {a: [a, a]}\n"), "no error");
}

TEST(YamlReader, RejectsASecondDocument) {
  EXPECT_EQ(yaml_error("a: 1\n---\na: 2\n"),
            "c.yaml:2:1: a second YAML document starts here; the file must hold one document");
  EXPECT_NE(yaml_error("a: 1\n---\n").find("c.yaml:2:1: a second YAML document"), std::string::npos);
  EXPECT_EQ(yaml_error("---\na: 1\n...\n"), "no error");
  EXPECT_TRUE(YamlReader("c.yaml").load("# only a comment\n").IsNull());
}

TEST(YamlReader, LimitsNesting) {
  std::string deep_block;
  for (int level = 0; level <= kMaxNestingDepth; ++level) deep_block += std::string(2 * level, ' ') + "k:\n";
  EXPECT_EQ(yaml_error(deep_block), "c.yaml:65:129: YAML nested deeper than 64 levels");
  // yaml-cpp reads unclosed brackets as lists and maps in turn: level 65 opens at column 33.
  EXPECT_EQ(yaml_error(std::string(100000, '[')), "c.yaml:1:33: YAML nested deeper than 64 levels");
  EXPECT_EQ(yaml_error(nested_lists(kMaxNestingDepth)), "no error");
  EXPECT_EQ(yaml_error(nested_lists(kMaxNestingDepth + 1)), "c.yaml:1:65: YAML nested deeper than 64 levels");
  // An alias counts the levels of the node it names.
  EXPECT_NE(yaml_error("a: &a " + std::string(40, '[') + std::string(40, ']') + "\nb: " + std::string(30, '[') + "*a" +
                       std::string(30, ']') + "\n")
                .find("c.yaml:2:34: alias *a nests the YAML deeper than 64 levels"),
            std::string::npos);
}

TEST(YamlReader, BoundsWhatAliasesExpandTo) {
  EXPECT_NE(yaml_error(alias_bomb("")).find("aliases expand to more than"), std::string::npos)
      << yaml_error(alias_bomb(""));
  // Level 4 already stands for 10^5 nodes, more than this file of 400 bytes may.
  EXPECT_NE(yaml_error(alias_bomb("")).find("c.yaml:5:"), std::string::npos) << yaml_error(alias_bomb(""));
  EXPECT_EQ(yaml_error("a: &a [x, y]\nb: *a\nc: [*a, *a]\n"), "no error");
  EXPECT_EQ(yaml_error("a: &a [b, *a]\n"), "c.yaml:1:11: alias *a is inside the node it names");
  EXPECT_EQ(yaml_error("&k key: 1\n*k : 2\n"), "c.yaml:2:1: duplicate key 'key' (first at line 1)");
}

// Records what a streamed document sends, as text.
class EventLog : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { log += "~" + anchor_text(anchor) + " "; }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { log += "ALIAS "; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    log += value + anchor_text(anchor) + " ";
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    log += "[" + anchor_text(anchor) + " ";
  }
  void OnSequenceEnd() override { log += "] "; }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    log += "{" + anchor_text(anchor) + " ";
  }
  void OnMapEnd() override { log += "} "; }
  std::string log;

 private:
  static std::string anchor_text(YAML::anchor_t anchor) { return anchor ? "&" : ""; }
};

TEST(YamlReader, StreamReplacesAliasesByWhatTheyName) {
  EventLog events;
  YamlReader("c.yaml").stream("a: &x {k: [1, ~]}\nb: *x\nc: &y {m: *x}\nd: [*y, *y]\n", events);
  EXPECT_EQ(events.log,
            "{ a { k [ 1 ~ ] } b { k [ 1 ~ ] } c { m { k [ 1 ~ ] } } d [ { m { k [ 1 ~ ] } } { m { k [ 1 ~ ] } } ] } ");
  EventLog none;
  YamlReader("c.yaml").stream("", none);
  EXPECT_EQ(none.log, "");
  EXPECT_NE(error_of([] {
              EventLog bombed;
              YamlReader("c.yaml").stream(alias_bomb(""), bombed);
            }).find("aliases expand to more than"),
            std::string::npos);
}

}  // namespace
}  // namespace repro_audit
