// Fault controls for collective cells: the last rank crashes in its first run, hangs in it, or never
// joins the group. The cell must end as crashed or timeout for every rank, with no process left behind
// and the audit going on. Not in the default suite, nor in `selftest` (each takes its time limit): the
// CLI tests run them. The hang and the absent rank wait half their limit (runners/collective_cell.cc):
// 6 s, many times what three ranks take to start and meet on a loaded two-core machine (about 1 s).
#include <chrono>
#include <thread>

#include "probe/probe.h"
#include "ranks/rank_group.h"

namespace repro_audit::collective_faults_probe {
namespace {

RunFunction rank_fault(ProbeContext& context) {
  const auto values = context.input("values", context.randn({64}));
  auto* group = context.group();
  const bool faulty = group && group->rank() == group->size() - 1;
  const auto fault = context.parameter("fault");
  return [=] {
    if (faulty && fault == "crash") {
      volatile int* nowhere = nullptr;
      *nowhere = 1;
    }
    if (faulty && fault == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    auto result = values.clone();
    if (group) group->all_reduce_sum(result);
    return Outputs{{"result", result}};
  };
}

const bool registered =
    register_probe(ProbeBuilder("control.rank_crash")
                       .describe("the last rank writes through a null pointer in its first run")
                       .collective()
                       .variant(Variant("default", "the last rank crashes").parameter("fault", "crash"))
                       .on_request_only()
                       .timeout(20)
                       .prepare(rank_fault)
                       .no_python("a fault control fails on purpose to test the auditor; it has no op to report")) &&
    register_probe(ProbeBuilder("control.rank_hang")
                       .describe("the last rank sleeps forever in its first run")
                       .collective()
                       .variant(Variant("default", "the last rank hangs").parameter("fault", "hang"))
                       .on_request_only()
                       .timeout(12)
                       .prepare(rank_fault)
                       .no_python("a fault control fails on purpose to test the auditor; it has no op to report")) &&
    register_probe(ProbeBuilder("control.rank_absent")
                       .describe("the last rank never joins the group (runners/collective_cell.h)")
                       .collective()
                       .variant(Variant("default", "the last rank never joins").parameter("fault", "absent"))
                       .on_request_only()
                       .timeout(12)
                       .prepare(rank_fault)
                       .no_python("a fault control fails on purpose to test the auditor; it has no op to report"));

}  // namespace
}  // namespace repro_audit::collective_faults_probe
