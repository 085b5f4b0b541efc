// histc: 2^20 values into 100 bins. CUDA counts with atomicAdd and raises under deterministic
// algorithms (torch.histc on CUDA, listed in every release from 2.4 to 2.15). Yet every add is 1: all
// orders give the same sequence of partial sums, in any dtype, so no order can change its bits and no
// input shape makes it race. The probe still shows what the device does and that strict raises.
#include "probe/probe.h"

namespace repro_audit::histc_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto input = context.input("input", context.randn({context.on_cuda() ? 1 << 24 : 1 << 20}, dtype));
  return [=] { return Outputs{{"output", at::histc(input, 100, -3, 3)}}; };
}

const bool registered = register_probe(
    ProbeBuilder("histc")
        .describe("histc of 2^20 values into 100 bins over [-3, 3]")
        .variant(
            Variant(DType::f32)
                .default_suite_on(
                    {"cuda"}, "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe histc"))
        .variant(
            Variant(DType::f64)
                .default_suite_on(
                    {"cuda"}, "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe histc"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked("every add is 1, so all orders give the same partial sums and the same bits: no "
                                "input can show the documented race, and a deterministic verdict proves nothing "
                                "of the kernel's order")
        .prepare(prepare)
        .python(R"(return {"output": torch.histc(input, 100, -3, 3)})"));

}  // namespace
}  // namespace repro_audit::histc_probe
