// scatter_reduce along dim 0 with many duplicate indices. CUDA reduces with atomics: under
// deterministic algorithms sum and mean switch to a sorted kernel and prod raises (the same in every
// release from 2.4 to 2.15); amax and amin are not listed, as a maximum is the same in any order. The
// CPU kernel reduces each output slice serially.
#include "probe/probe.h"

namespace repro_audit::scatter_reduce_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& reduce = context.parameter("reduce");
  // CUDA: 16 times the updates into the same slots, more atomics per address. Unverified on a GPU.
  const std::int64_t slots = 512, updates = context.on_cuda() ? 1 << 20 : 1 << 16;
  const auto base = context.input("base", context.to_device(at::zeros({slots}, at::TensorOptions().dtype(dtype))));
  const auto index = context.input("index", context.randint(slots, {updates}));
  // A product of 128 factors near 1 stays finite and rounds at every step.
  const auto spread = context.randn({updates}, dtype);
  const auto source = context.input("source", reduce == "prod" ? spread * 0.015625 + 1 : spread);
  return [=] { return Outputs{{"output", base.scatter_reduce(0, index, source, reduce, /*include_self=*/false)}}; };
}

constexpr const char* kPython =
    R"(return {"output": base.scatter_reduce(0, index, source, reduce, include_self=False)})";

Variant reducing(const std::string& reduce) {
  return Variant(reduce + "-f32", "reduce=" + reduce + ", float32")
      .dtype(DType::f32)
      .parameter("reduce", reduce)
      .default_suite_on({"cuda"},
                        "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe "
                        "scatter_reduce (or _prod, _extremum)");
}

const bool summing = register_probe(
    ProbeBuilder("scatter_reduce")
        .describe("scatter_reduce sum and mean along dim 0: 65536 values into 512 slots")
        .variant(reducing("sum"))
        .variant(reducing("mean"))
        .variant(
            Variant("sum-f64", "reduce=sum, float64")
                .dtype(DType::f64)
                .parameter("reduce", "sum")
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe scatter_reduce"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
        .accumulates("output", "source")
        .prepare(prepare)
        .python(kPython));

const bool multiplying = register_probe(
    ProbeBuilder("scatter_reduce_prod")
        .describe("scatter_reduce prod along dim 0: 65536 factors near 1 into 512 slots")
        .variant(reducing("prod"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked("a product: the check reorders sums of an input the result is linear in, and a "
                                "product is not; its order is the kernel's")
        .prepare(prepare)
        .python(kPython));

const bool extremes = register_probe(
    ProbeBuilder("scatter_reduce_extremum")
        .describe("scatter_reduce amax and amin along dim 0: 65536 values into 512 slots")
        .variant(reducing("amax"))
        .variant(reducing("amin"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .accumulation_unchecked("a maximum or minimum of the same values is exact in any order (no NaN or signed "
                                "zero among the inputs): no order can change its bits, so a deterministic verdict "
                                "proves nothing of the kernel's order")
        .prepare(prepare)
        .python(kPython));

}  // namespace
}  // namespace repro_audit::scatter_reduce_probe
