#pragma once
// Which per-cell changes fail a gate and which only warn, depending on whether the platform changed.
#include <string>
#include <vector>

#include "compare/compare.h"

namespace repro_audit {

enum class GateAction { ignore, warn, fail };
const char* to_string(GateAction action);

struct GateRules {
  std::vector<Change> fail;
  std::vector<Change> warn;
};

// Defaults: NEW-NONDETERMINISM and BROKE fail everywhere; DRIFT fails on an unchanged platform and
// warns after a platform change (a new cuDNN may legitimately pick other kernels, hence other bits);
// KERNELS-CHANGED and SLOWER warn; everything else is reported but ignored.
struct GatePolicy {
  GateRules unchanged_platform;
  GateRules changed_platform;
  double slower_threshold = 0.10;  // feeds CompareOptions::slower_threshold
  std::string source = "built-in defaults";
};

GatePolicy default_gate_policy();

// YAML; an empty file equals the defaults:
//   slower_threshold: 0.10
//   fail: [...]  warn: [...]                   # both platforms
//   unchanged_platform: {fail: [...], warn: [...]}
//   changed_platform:   {fail: [...], warn: [...]}
// Naming fail or warn for a platform replaces that platform's defaults as a whole: a class listed
// nowhere is ignored. Throws UserError with source:line:column and the valid choices.
GatePolicy parse_gate_policy(const std::string& text, const std::string& source);
GatePolicy load_gate_policy_file(const std::string& path);

GateAction action_for(const GatePolicy& policy, bool platform_changed, Change change);

struct GateFinding {
  std::string key;
  std::vector<Change> triggers;  // the cell's classes that the policy fails (or warns) on
  std::string detail;
};

struct GateResult {
  bool passed = true;
  bool platform_changed = false;
  std::vector<GateFinding> failures;  // cells with at least one failing class
  std::vector<GateFinding> warnings;  // cells with warning classes and no failing one
  std::string policy_source;
};

GateResult gate_outcome(const Comparison& comparison, const GatePolicy& policy);

// 0 passed (warnings allowed), 1 failed. Bad input never gets here: it is a UserError, exit 2.
int gate_exit_code(const GateResult& result);

// The finding for a cell, or null when the policy ignores every class of it.
const GateFinding* find_finding(const GateResult& result, const std::string& key, GateAction* action = nullptr);

}  // namespace repro_audit
