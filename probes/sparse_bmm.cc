// bmm of a sparse COO batch by a dense one, forward and backward (gradient of the dense operand).
// CUDA's sparse-dense bmm is documented to switch to a deterministic implementation under
// deterministic algorithms; the CPU kernel is deterministic.
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const std::int64_t batch = 8, rows = 256, inner = 256, columns = 64;
  // About 5% non-zeros, built on the CPU from the seed, then made sparse and moved.
  const auto sparse = context.sparse_values({batch, rows, inner}, 0.05, dtype).to_sparse().coalesce();
  context.input("sparse_indices", sparse.indices());
  context.input("sparse_values", sparse.values());
  const auto dense = context.input("dense", requiring_grad(context.randn({batch, inner, columns}, dtype)));
  const auto grad_output = context.input("grad_output", context.randn({batch, rows, columns}, dtype));
  return [=] {
    const auto output = at::bmm(sparse, dense);
    return Outputs{{"output", output.detach()}, {"grad_dense", gradient(output, dense, grad_output)}};
  };
}

const bool registered =
    register_probe(ProbeBuilder("sparse_bmm")
                       .weight(4)
                       .describe("bmm: sparse COO 8x256x256 (5% non-zero) by dense 8x256x64, forward and backward")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                       .accumulates("output", "sparse_values")
                       .prepare(prepare)
                       .python(R"(
                           sparse = torch.sparse_coo_tensor(sparse_indices, sparse_values, (8, 256, 256), is_coalesced=True)
                           dense.requires_grad_()
                           output = torch.bmm(sparse, dense)
                           return {"output": output.detach(), "grad_dense": gradient(output, dense, grad_output)}
                       )"));

}  // namespace
}  // namespace repro_audit
