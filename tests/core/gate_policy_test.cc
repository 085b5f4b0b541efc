// The gate policy file: its defaults, its sections, and the errors a bad one gets.
#include "compare/gate_policy.h"

#include <gtest/gtest.h>

#include "common/user_error.h"
#include "hostile_inputs.h"

namespace repro_audit {
namespace {

std::string policy_error(const std::string& text) {
  try {
    parse_gate_policy(text, "gate.yaml");
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

TEST(GatePolicy, DefaultsFollowTheIssue) {
  const auto policy = default_gate_policy();
  for (auto change : {Change::new_nondeterminism, Change::broke, Change::drift})
    EXPECT_EQ(action_for(policy, false, change), GateAction::fail) << to_string(change);
  for (auto change : {Change::kernels_changed, Change::slower})
    EXPECT_EQ(action_for(policy, false, change), GateAction::warn) << to_string(change);
  EXPECT_EQ(action_for(policy, true, Change::drift), GateAction::warn);
  EXPECT_EQ(action_for(policy, true, Change::new_nondeterminism), GateAction::fail);
  EXPECT_EQ(action_for(policy, true, Change::broke), GateAction::fail);
  for (auto change : {Change::same, Change::fixed, Change::faster, Change::missing, Change::added})
    for (bool platform_changed : {false, true})
      EXPECT_EQ(action_for(policy, platform_changed, change), GateAction::ignore) << to_string(change);
  EXPECT_DOUBLE_EQ(policy.slower_threshold, 0.10);
  EXPECT_EQ(parse_gate_policy("", "gate.yaml").unchanged_platform.fail, policy.unchanged_platform.fail);
}

TEST(GatePolicy, TopLevelListsSetBothPlatformsAndSectionsOverrideOne) {
  const auto policy = parse_gate_policy(R"(
slower_threshold: 0.25
fail: [NEW-NONDETERMINISM, BROKE, MISSING]
warn: [DRIFT]
changed_platform:
  warn: [DRIFT, SLOWER]
)",
                                        "gate.yaml");
  EXPECT_DOUBLE_EQ(policy.slower_threshold, 0.25);
  EXPECT_EQ(policy.source, "gate.yaml");
  EXPECT_EQ(action_for(policy, false, Change::missing), GateAction::fail);
  EXPECT_EQ(action_for(policy, false, Change::drift), GateAction::warn);
  EXPECT_EQ(action_for(policy, false, Change::slower), GateAction::ignore);  // replaced, not merged
  // The section replaces the changed-platform rules as a whole: nothing fails there.
  EXPECT_EQ(action_for(policy, true, Change::new_nondeterminism), GateAction::ignore);
  EXPECT_EQ(action_for(policy, true, Change::slower), GateAction::warn);
}

TEST(GatePolicy, ErrorsNameFileLineColumnAndChoices) {
  EXPECT_NE(policy_error("fial: [DRIFT]\n")
                .find("gate.yaml:1:1: unknown key 'fial'; valid keys: slower_threshold, fail, warn"),
            std::string::npos);
  const auto unknown_class = policy_error("unchanged_platform:\n  fail: [BROKE, DRIFTED]\n");
  EXPECT_NE(
      unknown_class.find("gate.yaml:2:17: unknown class 'DRIFTED' in unchanged_platform.fail; valid classes: MISSING, "
                         "NEW, BROKE, NEW-NONDETERMINISM, DRIFT, FIXED, KERNELS-CHANGED, SLOWER, FASTER, SAME"),
      std::string::npos)
      << unknown_class;
  EXPECT_NE(policy_error("changed_platform: {fail: [], block: []}\n")
                .find("gate.yaml:1:30: unknown key 'block' in changed_platform."),
            std::string::npos)
      << policy_error("changed_platform: {fail: [], block: []}\n");
  EXPECT_NE(policy_error("fail: [DRIFT]\nwarn: [DRIFT]\n").find("class 'DRIFT' is listed under both fail and warn"),
            std::string::npos);
  EXPECT_NE(policy_error("slower_threshold: ten\n").find("gate.yaml:1:19: slower_threshold must be a number"),
            std::string::npos);
  EXPECT_NE(policy_error("changed_platform: [DRIFT]\n").find("gate.yaml:1:19: changed_platform must be a map"),
            std::string::npos);
  EXPECT_NE(policy_error("[DRIFT]\n").find("gate.yaml:1:1: a gate policy must be a map"), std::string::npos);
}

TEST(GatePolicy, DuplicateKeysAndSecondDocumentsAreErrors) {
  EXPECT_EQ(policy_error("fail: [DRIFT]\nfail: [SLOWER]\n"), "gate.yaml:2:1: duplicate key 'fail' (first at line 1)");
  EXPECT_EQ(policy_error("unchanged_platform: {fail: [DRIFT], fail: [BROKE]}\n"),
            "gate.yaml:1:37: duplicate key 'fail' (first at line 1)");
  EXPECT_EQ(policy_error("fail: [DRIFT]\n---\nwarn: [SLOWER]\n"),
            "gate.yaml:2:1: a second YAML document starts here; the file must hold one document");
}

TEST(GatePolicy, DeepNestingAndAliasBombsStopAtLoad) {
  EXPECT_EQ(policy_error("fail: " + testing::nested_lists(100000)),
            "gate.yaml:1:70: YAML nested deeper than 64 levels");
  const auto bomb = policy_error(testing::alias_bomb(""));
  EXPECT_NE(bomb.find("aliases expand to more than"), std::string::npos) << bomb;
  EXPECT_EQ(bomb.rfind("gate.yaml:", 0), 0u) << bomb;
}

}  // namespace
}  // namespace repro_audit
