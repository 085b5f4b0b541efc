#pragma once
// The timer's A/A check inside one report: two flag sets that ran the same kernels for the same op
// (strict and strict-warn, both deterministic, on a GPU) do the same work, so their costs against the
// default profile must agree: their intervals come within 1% of each other (timing.h's negligible cost:
// fresh GPU workers running the same kernels differ by tenths of a percent, and an H200 timed one pair
// 6.05x, interval 5.95-6.05x, against 5.89x, 5.80-5.93x). A pair that disagrees measured the timer (a
// worker, a round, a hold given up), not the switch.
#include <string>
#include <vector>

#include "report/report.h"

namespace repro_audit {

struct SameKernelPair {
  std::string first;  // the two cells' keys, in report order
  std::string second;
  CostRatio first_cost;
  CostRatio second_cost;
  // The two cost intervals overlap once each reaches 1% further up.
  bool agree() const {
    return first_cost.low <= second_cost.high * (1 + kNegligibleCost) &&
           second_cost.low <= first_cost.high * (1 + kNegligibleCost);
  }
};

// Every pair of cells of one probe, variant, device and thread count whose flag sets differ, both
// deterministic and both with a cost, whose processes launched the same kernels (by name, grid and block).
std::vector<SameKernelPair> same_kernel_pairs(const Report& report);

}  // namespace repro_audit
