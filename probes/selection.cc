// median and kthvalue along rows of small integers (many equal values), with their indices. On CUDA
// the selection kernel lets every thread holding the chosen value write its index: which index lands
// is the schedule's. median with indices raises under deterministic algorithms (every release from 2.4
// to 2.15). kthvalue raised too until pytorch#165762 (2.10) made its kernel write the smallest such
// index. The CPU kernels are serial per row.
#include "probe/probe.h"

namespace repro_audit::selection_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const bool median = context.parameter("operation") == "median";
  // CUDA: longer rows, more threads holding the same value. Unverified on a GPU.
  const std::int64_t rows = 256, columns = context.on_cuda() ? 1 << 14 : 1024;
  const auto input = context.input("input", context.randint(8, {rows, columns}).to(dtype));
  return [=] {
    const auto [values, indices] = median ? at::median(input, 1) : at::kthvalue(input, columns / 3, 1);
    return Outputs{{"values", values}, {"indices", indices}};
  };
}

constexpr const char* kPython = R"(
    values, indices = torch.median(input, 1) if operation == "median" else torch.kthvalue(input, input.size(1) // 3, 1)
    return {"values": values, "indices": indices}
)";

constexpr const char* kUnchecked =
    "a selection, not a sum: the race is over which of equal values' indices is written, which the inputs "
    "offer (values 0 to 7) but no input orders";

const bool median_registered = register_probe(
    ProbeBuilder("median")
        .describe("median with indices along rows of 256 x 1024 integers 0-7")
        .variant(Variant(DType::f32)
                     .parameter("operation", "median")
                     .default_suite_on(
                         {"cuda"},
                         "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe median"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked(kUnchecked)
        .prepare(prepare)
        .python(kPython));

const bool kthvalue_registered = register_probe(
    ProbeBuilder("kthvalue")
        .describe("kthvalue (k = a third) with indices along rows of 256 x 1024 integers 0-7")
        .variant(Variant(DType::f32)
                     .parameter("operation", "kthvalue")
                     .default_suite_on(
                         {"cuda"},
                         "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe kthvalue"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .documented_before("2.10", "cuda", Documented::raises_under_strict,
                           "torch.use_deterministic_algorithms lists torch.kthvalue on CUDA among the ops that raise "
                           "up to 2.9; pytorch#165762 (2.10) made the kernel deterministic and took it off the list")
        .accumulation_unchecked(kUnchecked)
        .prepare(prepare)
        .python(kPython));

}  // namespace
}  // namespace repro_audit::selection_probe
