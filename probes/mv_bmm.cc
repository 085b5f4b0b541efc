// cuBLAS's other products: mv (2048 x 2048 by 2048) and dense bmm (32 batches of 128 x 128). Like mm
// (the matmul probe), cuBLAS promises bitwise results only with a fixed workspace configuration; up to
// 2.9 deterministic algorithms made them raise on CUDA without one.
#include "probe/probe.h"

namespace repro_audit::mv_bmm_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  if (context.parameter("operation") == "mv") {
    const auto a = context.input("a", context.randn({2048, 2048}, dtype));
    const auto b = context.input("b", context.randn({2048}, dtype));
    return [=] { return Outputs{{"output", at::mv(a, b)}}; };
  }
  const auto a = context.input("a", context.randn({32, 128, 128}, dtype));
  const auto b = context.input("b", context.randn({32, 128, 128}, dtype));
  return [=] { return Outputs{{"output", at::bmm(a, b)}}; };
}

const bool registered =
    register_probe(ProbeBuilder("mv_bmm")
                       .describe("mv 2048x2048 by 2048; dense bmm of 32 batches 128x128 by 128x128")
                       .variant(Variant("mv-f32", "mv, float32")
                                    .dtype(DType::f32)
                                    .parameter("operation", "mv")
                                    .default_suite_on({"cuda"},
                                                      "cuBLAS is the path at issue; the CPU's products are the matmul "
                                                      "probe's: run it here with --probe mv_bmm"))
                       .variant(Variant("bmm-f32", "dense bmm, float32")
                                    .dtype(DType::f32)
                                    .parameter("operation", "bmm")
                                    .default_suite_on({"cuda"},
                                                      "cuBLAS is the path at issue; the CPU's products are the matmul "
                                                      "probe's: run it here with --probe mv_bmm"))
                       .variant(Variant("bmm-bf16", "dense bmm, bfloat16")
                                    .dtype(DType::bf16)
                                    .parameter("operation", "bmm")
                                    .default_suite_on({"cuda"},
                                                      "cuBLAS is the path at issue; the CPU's products are the matmul "
                                                      "probe's: run it here with --probe mv_bmm"))
                       .documented_as_cublas_product()
                       .accumulates("output", "a")
                       .prepare(prepare)
                       .python(R"(return {"output": torch.mv(a, b) if operation == "mv" else torch.bmm(a, b)})"));

}  // namespace
}  // namespace repro_audit::mv_bmm_probe
