// Backward of the indexing ops whose gradient adds duplicates into one element: gather, index_select,
// repeat_interleave (its backward is index_select's) and __getitem__ with a list of index tensors (its
// backward is index_put with accumulate). On CUDA the first three add with atomicAdd and deterministic
// algorithms switch them to a sorted kernel; __getitem__'s is sorted on CUDA anyway, while on the CPU it
// adds in parallel with 2+ threads and deterministic algorithms serialise it. The same in
// torch.use_deterministic_algorithms of every release from 2.4 to 2.15.
#include "probe/probe.h"

namespace repro_audit::index_backward_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& op = context.parameter("operation");
  // 65536 gradients into 256 x 64 (CUDA: 16 times as many, more atomics per address; unverified on a GPU).
  const std::int64_t rows = 256, columns = 64, picks = context.on_cuda() ? 1 << 20 : 1 << 16;
  const auto input = context.input("input", requiring_grad(context.randn({rows, columns}, dtype)));
  std::function<at::Tensor()> forward;
  if (op == "gather") {
    const auto index = context.input("index", context.randint(rows, {picks / columns, columns}));
    forward = [=] { return at::gather(input, 0, index); };
  } else if (op == "index_select") {
    const auto index = context.input("index", context.randint(rows, {picks / columns}));
    forward = [=] { return at::index_select(input, 0, index); };
  } else if (op == "repeat_interleave") {
    // Mean repeat 32: 256 rows become about 8192.
    const auto repeats = context.input("repeats", context.randint(1, 64, {rows}));
    forward = [=] { return at::repeat_interleave(input, repeats, 0); };
  } else {
    const auto row = context.input("row", context.randint(rows, {picks}));
    const auto column = context.input("column", context.randint(columns, {picks}));
    forward = [=] { return input.index({row, column}); };
  }
  const auto grad_output = context.input("grad_output", context.randn(forward().sizes(), dtype));
  return [=] {
    const auto output = forward();
    return Outputs{{"output", output.detach()}, {"grad_input", gradient(output, input, grad_output)}};
  };
}

Variant indexing(const std::string& op, const std::string& description, std::map<std::string, Documented> documented) {
  return Variant(op + "-f32", description)
      .dtype(DType::f32)
      .parameter("operation", op)
      .documented(std::move(documented));
}

const std::map<std::string, Documented> kCudaAlternative = {{"cpu", Documented::deterministic},
                                                            {"cuda", Documented::alternative_under_strict}};

const bool registered = register_probe(
    ProbeBuilder("index_backward")
        .describe("backward of gather, index_select, repeat_interleave and x[rows, columns]: 65536 gradients "
                  "into 256 x 64")
        .variant(
            indexing("gather", "gather along dim 0", kCudaAlternative)
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe index_backward"))
        .variant(
            indexing("index_select", "index_select along dim 0", kCudaAlternative)
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe index_backward"))
        .variant(
            indexing("repeat_interleave", "repeat_interleave of rows, repeats 1-63", kCudaAlternative)
                .default_suite_on(
                    {"cuda"},
                    "documented racy on CUDA only; the CPU kernel is serial: run it here with --probe index_backward"))
        .variant(indexing("getitem", "x[rows, columns], a list of index tensors",
                          {{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::deterministic}}))
        .accumulates("grad_input", "grad_output")
        .prepare(prepare)
        .python(R"(
                           input.requires_grad_()
                           if operation == "gather":
                               output = torch.gather(input, 0, index)
                           elif operation == "index_select":
                               output = torch.index_select(input, 0, index)
                           elif operation == "repeat_interleave":
                               output = torch.repeat_interleave(input, repeats, dim=0)
                           else:
                               output = input[row, column]
                           return {"output": output.detach(), "grad_input": gradient(output, input, grad_output)}
                       )"));

}  // namespace
}  // namespace repro_audit::index_backward_probe
