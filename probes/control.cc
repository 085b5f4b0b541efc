// The control probes: a racy accumulation that must always be caught, and its ordered twin that
// must never be. They prove the detector works on the machine at hand.
#include "kernels/control_ops.h"
#include "worker/probe.h"

namespace repro_audit {
namespace {

constexpr std::int64_t kSlots = 16;

template <at::Tensor (*op)(const at::Tensor&, const at::Tensor&, std::int64_t)>
RunFunction prepare(ProbeContext& context) {
  const std::int64_t n = 1 << 20;
  const auto values = context.randn({n});
  const auto index = context.randint(kSlots, {n});
  return [=] { return Outputs{{"output", op(values, index, kSlots)}}; };
}

const std::vector<VariantInfo> kVariants = {variant("f32", "2^20 float32 values into 16 slots")};

const bool racy = register_probe({
    {"control.racy_accumulate",
     "float adds in an order decided by thread scheduling (atomics)",
     kVariants,
     {{"cpu", Documented::nondeterministic}, {"cuda", Documented::nondeterministic}},
     true,
     60,
     "nondeterministic"},
    prepare<racy_accumulate>,
});

const bool ordered = register_probe({
    {"control.ordered_accumulate",
     "the same sum in a fixed order",
     kVariants,
     {{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}},
     true,
     60,
     "deterministic"},
    prepare<ordered_accumulate>,
});

}  // namespace
}  // namespace repro_audit
