#include "runners/invariance_cell.h"

#include "hash/tensor_digest.h"
#include "runners/repeat_cell.h"

namespace repro_audit {
namespace {

// Its repeats are its kind's (kinds/invariance_kind.cc).
class InvarianceRunner : public ProbeRunner {
 public:
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
