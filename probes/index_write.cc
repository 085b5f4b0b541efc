// Writes with duplicate indices, where the last write wins: scatter with a tensor source, index_copy
// and index_put with accumulate=False, 8192 rows of 64 into 512. Which duplicate lands is the order of
// the writes: CUDA's threads race, and so may the CPU's for index_copy and index_put. Under
// deterministic algorithms scatter switches on CUDA, index_copy and index_put(accumulate=False) on every
// device (torch.use_deterministic_algorithms, every release from 2.4 to 2.15).
#include "probe/probe.h"

namespace repro_audit::index_write_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& op = context.parameter("operation");
  // CUDA: 16 times the rows into the same 512, more writers per address. Unverified on a GPU.
  const std::int64_t slots = 512, columns = 64, updates = context.on_cuda() ? 1 << 17 : 1 << 13;
  const auto base =
      context.input("base", context.to_device(at::zeros({slots, columns}, at::TensorOptions().dtype(dtype))));
  const auto source = context.input("source", context.randn({updates, columns}, dtype));
  if (op == "scatter") {
    const auto index = context.input("index", context.randint(slots, {updates, columns}));
    return [=] { return Outputs{{"output", base.scatter(0, index, source)}}; };
  }
  const auto index = context.input("index", context.randint(slots, {updates}));
  if (op == "index_copy") return [=] { return Outputs{{"output", base.index_copy(0, index, source)}}; };
  return [=] { return Outputs{{"output", base.index_put({index}, source, /*accumulate=*/false)}}; };
}

Variant writing(const std::string& op, const std::string& description) {
  return Variant(op + "-f32", description).dtype(DType::f32).parameter("operation", op);
}

const bool registered = register_probe(
    ProbeBuilder("index_write")
        .describe("scatter(src), index_copy, index_put(accumulate=False): 8192 rows of 64 into 512, duplicates")
        .variant(
            writing("scatter", "scatter along dim 0, a tensor source")
                .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::alternative_under_strict}})
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe index_write"))
        .variant(writing("index_copy", "index_copy along dim 0"))
        .variant(writing("index_put", "index_put with accumulate=False"))
        .documented({{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::alternative_under_strict}})
        .accumulation_unchecked("writes, not sums: which duplicate lands is the order of the writes, which no "
                                "input of the probe sets")
        .prepare(prepare)
        .python(R"(
                           if operation == "scatter":
                               return {"output": base.scatter(0, index, source)}
                           if operation == "index_copy":
                               return {"output": base.index_copy(0, index, source)}
                           return {"output": base.index_put((index,), source, accumulate=False)}
                       )"));

}  // namespace
}  // namespace repro_audit::index_write_probe
