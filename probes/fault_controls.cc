// Fault controls: probes that fail on purpose, so `selftest` can show the auditor survives them.
// Not in the default suite; `repro-audit list --all` shows them.
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <ATen/Context.h>

#include "probe/probe.h"

namespace repro_audit::fault_controls_probe {
namespace {

// One variant without typed parameters: these fail before any input is made.
ProbeBuilder fault_control(const std::string& name, const std::string& description, VerdictKind expects,
                           PrepareFunction prepare) {
  ProbeBuilder probe(name);
  probe.describe(description)
      .variant(Variant("default", description))
      .on_request_only()
      .control_expects(expects)
      .prepare(std::move(prepare))
      .no_python("a fault control fails on purpose to test the auditor; it has no op to report");
  return probe;
}

// A run that is never reached still needs a function to return.
Outputs never() { return {}; }

RunFunction segfault(ProbeContext&) {
  return [] {
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // a real invalid write, not raise(SIGSEGV): the worker must survive the genuine article
    return never();
  };
}

RunFunction abort_run(ProbeContext&) {
  return []() -> Outputs { std::abort(); };
}

RunFunction hang(ProbeContext&) {
  return []() -> Outputs {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  };
}

RunFunction throw_run(ProbeContext&) {
  return []() -> Outputs { throw std::runtime_error("control.throw: thrown on purpose"); };
}

// Allocates 256 MiB blocks until the worker's own memory limit (RLIMIT_DATA) refuses one; the
// allocator's error ends the cell as `error`, the blocks are freed, and the worker carries on.
RunFunction alloc_storm(ProbeContext&) {
  return []() -> Outputs {
    rlimit limit{};
    getrlimit(RLIMIT_DATA, &limit);
    if (limit.rlim_cur == RLIM_INFINITY)
      throw std::runtime_error("control.alloc_storm: the worker set no memory limit");
    // Under deterministic algorithms `empty` fills new memory with NaN, which would touch every
    // page up to the limit; the storm only needs the allocations refused, not the memory used.
    at::globalContext().setDeterministicFillUninitializedMemory(false);
    std::vector<at::Tensor> blocks;
    for (;;) blocks.push_back(at::empty({256 << 20}, at::kByte));
  };
}

const bool registered =
    register_probe(
        fault_control("control.segfault", "writes through a null pointer", VerdictKind::crashed, segfault)) &&
    register_probe(fault_control("control.abort", "calls abort()", VerdictKind::crashed, abort_run)) &&
    register_probe(fault_control("control.hang", "sleeps forever", VerdictKind::timeout, hang).timeout(0.5)) &&
    register_probe(fault_control("control.throw", "throws an exception", VerdictKind::error, throw_run)) &&
    register_probe(fault_control("control.alloc_storm", "allocates until the worker's memory limit", VerdictKind::error,
                                 alloc_storm));

}  // namespace
}  // namespace repro_audit::fault_controls_probe
