// The invariance controls: a row sum whose partial sums are chosen by the batch size (batch-variant
// by construction, must always be caught) and its twin with fixed partial sums (must never be).
// They prove the invariance detector works on the machine at hand.
#include "kernels/control_ops.h"
#include "probe/invariance.h"

namespace repro_audit::control_invariance_probe {
namespace {

template <at::Tensor (*op)(const at::Tensor&)>
RunFunction prepare(ProbeContext& context) {
  const auto sizes = default_batch_sizes();
  const auto anchor = context.input("anchor", context.randn({1, 4096}));
  const auto fillers = context.input("fillers", context.randn({sizes.back() - 1, 4096}));
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
                       .prepare(prepare<row_sum_by_batch>)
                       .python(R"(
                           def row_sum(rows):
                               parts = 1 if rows.size(0) < 4 else 4 if rows.size(0) < 16 else 16
                               partial = rows.view(rows.size(0), -1, parts).sum(1)
                               return sum(partial[:, k] for k in range(1, parts)) + partial[:, 0]
                           return batch_invariance([anchor], [fillers], lambda x: row_sum(x[0]), default_batch_sizes())
                       )")
                       .python_differs("its kernel is repro-audit's own C++; the twin forms the same partial sums "
                                       "with torch ops, in another order"));

const bool invariant = register_probe(ProbeBuilder("control.batch_invariant_row_sum")
                                          .describe("the same row sums with 4 partial sums whatever the batch")
                                          .invariance(Invariance::batch)
                                          .variant(kFloat32)
                                          .control_expects(VerdictKind::invariant)
                                          .prepare(prepare<row_sum_fixed>)
                                          .python(R"(
                                              def row_sum(rows):
                                                  partial = rows.view(rows.size(0), -1, 4).sum(1)
                                                  return ((partial[:, 0] + partial[:, 1]) + partial[:, 2]) + partial[:, 3]
                                              return batch_invariance([anchor], [fillers], lambda x: row_sum(x[0]),
                                                                      default_batch_sizes())
                                          )")
                                          .python_differs("its kernel is repro-audit's own C++; the twin forms the "
                                                          "same partial sums with torch ops, in another order")
                                          .python_differs_on_cuda("the twin's torch sums are batch-variant on CUDA "
                                                                  "(seen on an H200): it varies where the control "
                                                                  "does not"));

}  // namespace
}  // namespace repro_audit::control_invariance_probe
