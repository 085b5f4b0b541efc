// The timing control: a busy loop (on the CPU, or one thread of the GPU) whose work is a known multiple
// under the strict profile, so `selftest` and the tests prove the timer sees a 30% cost and does not
// invent one where there is none.
// On request only: it measures the tool, not PyTorch.
#include <ATen/Context.h>

#include "kernels/control_ops.h"
#include "probe/probe.h"

namespace repro_audit::control_timing_probe {
namespace {

// About 2 ms of dependent integer work at 1x on a current CPU, about 1 ms on one GPU thread: far above
// the timer's resolution and the per-run overhead, yet quick enough for many timing samples.
constexpr std::int64_t kIterations = 4'000'000;
constexpr std::int64_t kCudaIterations = 60'000;

RunFunction prepare(ProbeContext& context) {
  const double strict_work = std::stod(context.parameter("strict_work"));
  const auto iterations = context.on_cuda() ? kCudaIterations : kIterations;
  const auto like = at::empty({0}, at::TensorOptions().device(context.device()));
  return [strict_work, iterations, like] {
    const bool strict = at::globalContext().deterministicAlgorithms();
    const auto work = static_cast<std::int64_t>(static_cast<double>(iterations) * (strict ? strict_work : 1.0));
    return Outputs{{"state", busy_work(like, work, iterations)}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("control.timed_cost")
        .describe("a busy loop whose work under strict is a known multiple of its work under default")
        .variant(Variant("cost-1.3x", "1.3x the work under deterministic algorithms")
                     .parameter("strict_work", "1.3")
                     .expects_cost(1.3))
        .variant(
            Variant("cost-1.0x", "the same work under every profile").parameter("strict_work", "1.0").expects_cost(1.0))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .on_request_only()
        .control_expects(VerdictKind::deterministic)
        .prepare(prepare)
        .no_python("a timing control: a C++ busy loop that measures the timer, not an op of PyTorch"));

}  // namespace
}  // namespace repro_audit::control_timing_probe
