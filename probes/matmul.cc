// matmul 512x512 by 512x512. cuBLAS promises bitwise results only with a fixed workspace
// configuration (CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8); without one, deterministic algorithms
// make cuBLAS calls raise.
#include "probe/probe.h"

namespace repro_audit::matmul_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto a = context.input("a", context.randn({512, 512}, dtype));
  const auto b = context.input("b", context.randn({512, 512}, dtype));
  return [=] { return Outputs{{"output", at::matmul(a, b)}}; };
}

const bool registered = register_probe(ProbeBuilder("matmul")
                                           .weight(2)
                                           .describe("matmul 512x512 by 512x512")
                                           .variant(Variant(DType::f32))
                                           .variant(Variant(DType::f64).weight(5))
                                           .variant(Variant(DType::bf16))
                                           .variant(Variant(DType::f16).weight(96))
                                           .documented_as_cublas_product()
                                           .accumulates("output", "a")
                                           .prepare(prepare)
                                           .python(R"(return {"output": torch.matmul(a, b)})"));

}  // namespace
}  // namespace repro_audit::matmul_probe
