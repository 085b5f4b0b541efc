#pragma once
// The timer's A/A check inside one report: two flag sets that ran the same kernels for the same op
// (strict and strict-warn, both deterministic, on a GPU) do the same work, so their costs against the
// default profile must agree within their intervals. A pair that disagrees measured the timer (a
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
  // The two cost intervals overlap.
  bool agree() const { return first_cost.low <= second_cost.high && second_cost.low <= first_cost.high; }
};

// Every pair of cells of one probe, variant, device and thread count whose flag sets differ, both
// deterministic and both with a cost, whose processes launched the same kernels (by name).
std::vector<SameKernelPair> same_kernel_pairs(const Report& report);

}  // namespace repro_audit
