// The control probes: a racy accumulation that must always be caught, and its ordered twin that
// must never be. They prove the detector works on the machine at hand.
#include "kernels/control_ops.h"
#include "probe/probe.h"

namespace repro_audit::control_probe {
namespace {

constexpr std::int64_t kSlots = 16;

template <at::Tensor (*op)(const at::Tensor&, const at::Tensor&, std::int64_t)>
RunFunction prepare(ProbeContext& context) {
  const std::int64_t n = 1 << 20;
  const auto values = context.input("values", context.randn({n}));
  const auto index = context.input("index", context.randint(kSlots, {n}));
  return [=] { return Outputs{{"output", op(values, index, kSlots)}}; };
}

// The kernels take float32 only.
const Variant kFloat32 = Variant(DType::f32, "2^20 float32 values into 16 slots");

const bool racy =
    register_probe(ProbeBuilder("control.racy_accumulate")
                       .weight(10)
                       .describe("float adds in an order decided by thread scheduling (atomics)")
                       .variant(kFloat32)
                       .documented({{"cpu", Documented::nondeterministic}, {"cuda", Documented::nondeterministic}})
                       .control_expects(VerdictKind::nondeterministic)
                       .accumulates("output", "values")
                       .prepare(prepare<racy_accumulate>)
                       .python(R"(
                           import threading
                           output = torch.zeros(16, dtype=values.dtype, device=values.device)
                           together = threading.Barrier(4)
                           def add(first):
                               together.wait()
                               output.index_add_(0, index[first::4], values[first::4])
                           threads = [threading.Thread(target=add, args=(first,)) for first in range(4)]
                           for thread in threads:
                               thread.start()
                           for thread in threads:
                               thread.join()
                           return {"output": output}
                       )")
                       .python_differs("its kernel is repro-audit's own C++ (atomic adds from 4 threads); the "
                                       "twin races 4 Python threads' index_add_ on one tensor instead"));

const bool ordered = register_probe(
    ProbeBuilder("control.ordered_accumulate")
        .describe("the same sum in a fixed order")
        .variant(kFloat32)
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .control_expects(VerdictKind::deterministic)
        .accumulates("output", "values")
        .prepare(prepare<ordered_accumulate>)
        .python(
            R"(return {"output": torch.zeros(16, dtype=values.dtype, device=values.device).index_add_(0, index, values)})")
        .python_differs_on_cuda("its CUDA kernel is repro-audit's own, adding in its own fixed order; the twin's "
                                "index_add_ adds in another (seen on an H200)"));

}  // namespace
}  // namespace repro_audit::control_probe
