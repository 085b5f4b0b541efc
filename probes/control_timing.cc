// The timing control: a busy loop whose work is a known multiple under the strict profile, so
// `selftest` and the tests prove the timer sees a 30% cost and does not invent one where there is none.
// On request only: it measures the tool, not PyTorch.
#include <ATen/Context.h>

#include "worker/probe.h"

namespace repro_audit {
namespace {

// About 2 ms of dependent integer work at 1x on a current CPU: far above the clock's resolution and
// the per-run overhead, yet quick enough for many timing samples.
constexpr std::int64_t kIterations = 4'000'000;

// The extra work's last state goes here, so the compiler keeps it; the output is the state after the
// base work alone, the same bits under every profile.
volatile std::uint64_t sink = 0;

std::int64_t busy_loop(std::int64_t iterations) {
  std::uint64_t state = 88172645463325252ull, output = 0;
  for (std::int64_t i = 0; i < iterations; ++i) {  // xorshift64: each step needs the last
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    if (i + 1 == kIterations) output = state;
  }
  sink = state;
  return static_cast<std::int64_t>(output >> 1);
}

RunFunction prepare(ProbeContext& context) {
  if (context.device().is_cuda()) throw Unsupported("the timing control times host work: on the CPU only");
  const double strict_work = std::stod(context.parameter("strict_work"));
  return [strict_work] {
    const bool strict = at::globalContext().deterministicAlgorithms();
    const auto iterations = static_cast<std::int64_t>(static_cast<double>(kIterations) * (strict ? strict_work : 1.0));
    return Outputs{{"state", at::full({1}, busy_loop(iterations), at::kLong)}};
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
}  // namespace repro_audit
