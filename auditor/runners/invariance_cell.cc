#include "runners/invariance_cell.h"

#include <algorithm>

#include "hash/tensor_digest.h"
#include "runners/repeat_cell.h"

namespace repro_audit {
namespace {

// Repeats an invariance cell runs per process at most. Its answer is run 0's: each perturbed result
// against the reference, computed side by side in one run. The later runs only check that the runs
// agree (8 runs over 2 processes catch a divergence shown by a third of runs 94% of the time; the
// repeat probes of matmul, conv, sum and embedding_bag take every repeat asked for). A run computes
// its op at up to 28 batch sizes: with 10 repeats the suite under the default profiles takes half an
// hour on a 2-core host.
constexpr int kInvarianceRepeats = 3;

class InvarianceRunner : public ProbeRunner {
 public:
  int repeats(int requested) const override { return std::min(requested, kInvarianceRepeats); }
  void account(int index, const Digested& digested, RunObservation&, RunExtras*, const std::vector<KernelRecord>&,
               const std::vector<at::Tensor>&, ProcessObservation& observation) override {
    if (index != 0) return;
    const auto& names = digested.run.outputs;
    for (std::size_t i = 1; i < names.size(); ++i)
      if (names[i].second != names.front().second)
        observation.variations.push_back(
            compare_tensors(digested.names[i], 0, digested.canonical.front(), digested.canonical[i]));
  }
};

}  // namespace

std::unique_ptr<CellRunner> make_invariance_runner() { return std::make_unique<InvarianceRunner>(); }

}  // namespace repro_audit
