// matmul 512x512 by 512x512. cuBLAS promises bitwise results only with a fixed workspace
// configuration (CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8); without one, deterministic algorithms
// make cuBLAS calls raise.
#include "worker/probe.h"

namespace repro_audit {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = dtype_of_variant(context.variant());
  const auto a = context.randn({512, 512}, dtype);
  const auto b = context.randn({512, 512}, dtype);
  return [=] { return Outputs{{"output", at::matmul(a, b)}}; };
}

const bool registered = register_probe({
    {"matmul",
     "matmul 512x512 by 512x512",
     {variant("f32", "float32"), variant("f64", "float64"), variant("bf16", "bfloat16"), variant("f16", "float16")},
     {{"cpu", Documented::deterministic}, {"cuda", Documented::cublas_workspace}}},
    prepare,
});

}  // namespace
}  // namespace repro_audit
