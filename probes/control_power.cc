// A divergence of known frequency, for the statistical power of an audit's runs: each run diverges
// with probability p, the way a race shows in some runs and not in others. Whether run k of a process
// diverges is a counter hash of (a number the process draws once, k) against p, so the chance is exact
// and runs are independent; a diverging run moves one element by one ULP at a place of its own, so
// every diverging run has bits of its own. Over many cells of n runs, the share caught must be
// 1 - (1 - p)^n (tools/power-table measures it; `selftest` checks one p).
#include <atomic>
#include <cmath>
#include <random>
#include <string>

#include "inputs/portable_values.h"
#include "probe/probe.h"

namespace repro_audit::control_power_probe {
namespace {

std::uint64_t process_nonce() {
  static const std::uint64_t nonce = [] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }();
  return nonce;
}

std::atomic<std::uint64_t> runs_so_far{0};

RunFunction prepare(ProbeContext& context) {
  const double p = std::stod(context.parameter("p"));
  const std::int64_t size = 1024;
  const auto values = context.input("values", context.randn({size}));
  return [=] {
    const auto run = runs_so_far++;
    auto output = values.clone();
    const double draw = static_cast<double>(counter_bits({process_nonce(), 0}, run) >> 11) * 0x1p-53;
    if (draw < p) {
      auto element = output.narrow(0, static_cast<std::int64_t>(run % size), 1);
      element.copy_(at::nextafter(element, at::full_like(element, INFINITY)));
    }
    return Outputs{{"output", output}};
  };
}

Variant with_rate(const std::string& p) {
  return Variant("p" + p, "float32; each run diverges with probability " + p).parameter("p", p);
}

const bool registered = register_probe(
    ProbeBuilder("control.rare_divergence")
        .describe("a divergence that shows in a known fraction p of runs: the power of the runs, measured")
        .variant(with_rate("0.3"))
        .variant(with_rate("0.1"))
        .variant(with_rate("0.05"))
        .variant(with_rate("0.01"))
        .documented({{"cpu", Documented::nondeterministic}, {"cuda", Documented::nondeterministic}})
        .on_request_only()
        .prepare(prepare)
        .no_python("whether a run diverges is drawn from a number the worker process draws once; a script "
                   "would draw its own"));

}  // namespace
}  // namespace repro_audit::control_power_probe
