// The invariance controls: a row sum whose partial sums are chosen by the batch size (batch-variant
// by construction, must always be caught) and its twin with fixed partial sums (must never be).
// They prove the invariance detector works on the machine at hand.
#include "kernels/control_ops.h"
#include "worker/invariance.h"

namespace repro_audit {
namespace {

template <at::Tensor (*op)(const at::Tensor&)>
RunFunction prepare(ProbeContext& context) {
  const auto sizes = default_batch_sizes();
  const auto anchor = context.randn({1, 4096});
  const auto fillers = context.randn({sizes.back() - 1, 4096});
  return batch_invariance(
      {anchor}, {fillers}, [](const std::vector<at::Tensor>& x) { return op(x[0]); }, sizes);
}

const Variant kFloat32 = Variant(DType::f32, "rows of 4096 float32 values");

const bool variant =
    register_probe(ProbeBuilder("control.batch_variant_row_sum")
                       .describe("row sums whose partial sums depend on the number of rows in the batch")
                       .invariance(Invariance::batch)
                       .variant(kFloat32)
                       .control_expects(VerdictKind::varies)
                       .prepare(prepare<row_sum_by_batch>));

const bool invariant = register_probe(ProbeBuilder("control.batch_invariant_row_sum")
                                          .describe("the same row sums with 4 partial sums whatever the batch")
                                          .invariance(Invariance::batch)
                                          .variant(kFloat32)
                                          .control_expects(VerdictKind::invariant)
                                          .prepare(prepare<row_sum_fixed>));

}  // namespace
}  // namespace repro_audit
