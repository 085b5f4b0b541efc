// bmm of a sparse COO batch by a dense one, forward and backward (gradient of the dense operand).
// CUDA's sparse-dense bmm is documented to switch to a deterministic implementation under
// deterministic algorithms; the CPU kernel is deterministic.
#include "probe/probe.h"

namespace repro_audit::sparse_bmm_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  // On CUDA a smaller, denser problem: at 5% non-zeros cuSPARSE's bmm gave one result in every flag set on
  // an H200, while 8x64x256 at a third non-zero by 8x256x128 gave 10 results in 10 runs by default.
  const bool cuda = context.on_cuda();
  const std::int64_t batch = 8, rows = cuda ? 64 : 256, inner = 256, columns = cuda ? 128 : 64;
  const double density = cuda ? 1.0 / 3 : 0.05;
  // Built on the CPU from the seed, then made sparse and moved.
  const auto sparse = context.sparse_values({batch, rows, inner}, density, dtype).to_sparse().coalesce();
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
                       .describe("bmm: sparse COO 8x256x256 (5% non-zero) by dense 8x256x64, forward and backward; "
                                 "on CUDA 8x64x256 (a third non-zero) by 8x256x128")
                       .variant(Variant(DType::f32))
                       .variant(Variant(DType::f64))
                       .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                       .accumulates("output", "sparse_values")
                       .prepare(prepare)
                       .python(R"(
                           size = (dense.shape[0], grad_output.shape[1], dense.shape[1])
                           sparse = torch.sparse_coo_tensor(sparse_indices, sparse_values, size, is_coalesced=True)
                           dense.requires_grad_()
                           output = torch.bmm(sparse, dense)
                           return {"output": output.detach(), "grad_dense": gradient(output, dense, grad_output)}
                       )"));

}  // namespace
}  // namespace repro_audit::sparse_bmm_probe
