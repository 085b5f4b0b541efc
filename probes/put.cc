// Tensor.put_ with many duplicate indices into a flat 1024-slot tensor.
// accumulate=True: the CPU kernel adds in parallel (deterministic algorithms serialise it); CUDA adds
// with atomicAdd and raises. accumulate=False: with duplicates the last write wins, and which one is
// last depends on the schedule; it raises under deterministic algorithms on every device. The same
// in torch.use_deterministic_algorithms of every release from 2.4 to 2.15.
#include "probe/probe.h"

namespace repro_audit::put_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const bool accumulate = context.parameter("accumulate") == "true";
  const std::int64_t slots = 1024, updates = context.on_cuda() ? 1 << 22 : 1 << 18;  // CUDA unverified
  const auto base = context.input("base", context.to_device(at::zeros({slots}, at::TensorOptions().dtype(dtype))));
  const auto index = context.input("index", context.randint(slots, {updates}));
  const auto values = context.input("values", context.randn({updates}, dtype));
  return [=] { return Outputs{{"output", base.clone().put_(index, values, accumulate)}}; };
}

constexpr const char* kPython =
    R"(return {"output": base.clone().put_(index, values, accumulate=accumulate == "true")})";

const bool accumulating = register_probe(
    ProbeBuilder("put_accumulate")
        .describe("put_ with accumulate=True: 2^18 values into 1024 slots")
        .variant(Variant(DType::f32).parameter("accumulate", "true"))
        .variant(Variant(DType::f64)
                     .parameter("accumulate", "true")
                     .default_suite_on({"cuda"}, "f32 covers the CPU's path: run it here with --probe put_accumulate"))
        .documented({{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::raises_under_strict}})
        .accumulates("output", "values")
        .prepare(prepare)
        .python(kPython));

const bool overwriting = register_probe(
    ProbeBuilder("put")
        .describe("put_ with accumulate=False: 2^18 values into 1024 slots, the last write wins")
        .variant(Variant(DType::f32).parameter("accumulate", "false"))
        .documented({{"cpu", Documented::raises_under_strict}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked("a write, not a sum: which duplicate lands is the order of the writes, which no "
                                "input of the probe sets")
        .prepare(prepare)
        .python(kPython));

}  // namespace
}  // namespace repro_audit::put_probe
