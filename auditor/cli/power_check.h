#pragma once
// `selftest`'s check of the statistical power of an audit's runs: the control whose runs each diverge
// with probability 0.1 (control.rare_divergence/p0.1), in independent cells of the runs `--detect 0.1`
// chooses; each must catch it with probability 1 - 0.9^n >= 95%, so nearly every cell must.
#include <string>

namespace repro_audit {

struct PowerCheck {
  int cells = 0;
  int caught = 0;       // nondeterministic verdicts
  int runs = 0;         // per cell
  double expected = 0;  // the share expected caught: 1 - (1 - p)^runs
  int required = 0;     // caught at or above this passes (a false failure below one in a thousand)
  bool complete = false;
  bool passed() const { return complete && caught >= required; }
};

PowerCheck check_power(const std::string& device);
std::string power_check_text(const PowerCheck& check);

}  // namespace repro_audit
