// New memory that nothing wrote: empty, empty_like and resize_ of 2^20 float32 and 2^20 int64
// elements. By default they hold whatever the allocator hands back; with deterministic algorithms and
// torch.utils.deterministic.fill_uninitialized_memory (on by default) they are filled with NaN and the
// largest integer (every release from 2.4 to 2.15), which costs a pass over the memory: the cell's cost
// under strict against default is that fill.
#include "probe/probe.h"

namespace repro_audit::fill_uninitialized_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto& op = context.parameter("operation");
  const std::int64_t size = 1 << 20;
  const auto floats = at::TensorOptions().dtype(context.dtype()).device(context.device());
  const auto integers = floats.dtype(at::kLong);
  const auto like = context.input("like", context.randn({size}, context.dtype()));
  return [=] {
    if (op == "empty") return Outputs{{"floats", at::empty({size}, floats)}, {"integers", at::empty({size}, integers)}};
    if (op == "empty_like")
      return Outputs{{"floats", at::empty_like(like)}, {"integers", at::empty_like(like, integers)}};
    auto grown_floats = at::empty({0}, floats);
    auto grown_integers = at::empty({0}, integers);
    grown_floats.resize_({size});
    grown_integers.resize_({size});
    return Outputs{{"floats", grown_floats}, {"integers", grown_integers}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("fill_uninitialized")
        .weight(2)
        .describe("uninitialised memory: empty, empty_like and resize_ of 2^20 float32 and 2^20 int64")
        .variant(Variant("empty-f32", "torch.empty").dtype(DType::f32).parameter("operation", "empty"))
        .variant(Variant("empty_like-f32", "torch.empty_like")
                     .dtype(DType::f32)
                     .parameter("operation", "empty_like")
                     .default_suite_on({"cuda"},
                                       "empty-f32 shows the CPU's fill: run it here with --probe fill_uninitialized"))
        .variant(Variant("resize-f32", "Tensor.resize_ from 0")
                     .dtype(DType::f32)
                     .parameter("operation", "resize")
                     .default_suite_on({"cuda"},
                                       "empty-f32 shows the CPU's fill: run it here with --probe fill_uninitialized"))
        // Not an algorithm, but the same promise: any bits by default, fixed ones under strict.
        .documented({{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::alternative_under_strict}})
        .prepare(prepare)
        .python(R"(
                           size = 1 << 20
                           if operation == "empty":
                               return {"floats": torch.empty(size, dtype=dtype, device=device),
                                       "integers": torch.empty(size, dtype=torch.int64, device=device)}
                           if operation == "empty_like":
                               return {"floats": torch.empty_like(like),
                                       "integers": torch.empty_like(like, dtype=torch.int64)}
                           floats = torch.empty(0, dtype=dtype, device=device)
                           integers = torch.empty(0, dtype=torch.int64, device=device)
                           floats.resize_(size)
                           integers.resize_(size)
                           return {"floats": floats, "integers": integers}
                       )"));

}  // namespace
}  // namespace repro_audit::fill_uninitialized_probe
