// `repro-audit rank`: one of the other ranks of a collective cell (runners/collective_cell.h). Its
// request comes on stdin from rank 0's worker; it says "joining" before the rendezvous, then follows
// rank 0's runs until told to stop. Events go to stdout as JSON lines: joining, done, or error.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "apply/settings_apply.h"
#include "plan/ranks.h"
#include "protocol/worker_protocol.h"
#include "ranks/collective_step.h"
#include "ranks/rank_group.h"
#include "runners/collective_cell.h"
#include "runners/repeat_cell.h"
#include "worker/entry_points.h"
#include "worker/worker.h"

namespace repro_audit {

int rank_main() {
  // Its worker decides when it stops; if the worker dies, so does it.
  ::signal(SIGINT, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 3;
  const auto emit = event_stream();
  try {
    const auto json = nlohmann::json::parse(std::cin);
    const auto request = request_from_json(json.at("request"));
    const int rank = json.at("rank").get<int>();
    const auto store = json.at("store").get<std::string>();
    const std::chrono::milliseconds timeout(json.at("timeout_ms").get<std::int64_t>());
    const auto& cell = request.cells.at(0);
    const int ranks = ranks_of(cell.settings);
    const auto seed = static_cast<std::uint64_t>(std::stoull(cell.settings.at("seed")));
    const at::Device device(request.device);
    apply_cell_settings(cell.settings);
    const auto [probe, variant] = cell_probe(cell, device);
    // The control whose last rank never joins (probes/collective_faults.cc).
    const auto fault = variant->parameters.find("fault");
    if (fault != variant->parameters.end() && fault->second == "absent" && rank == ranks - 1)
      for (;;) ::pause();
    emit({{"event", "joining"}});
    const auto group = make_rank_group({rank, ranks, store, timeout, device});
    ProbeContext context(device, seed, *variant, nullptr, request.input_scheme);
    context.set_group(group.get());
    const auto run = probe->prepare(context);
    while (true) {
      at::manual_seed(seed);  // as rank 0 does before each run
      if (!follow_run(*group, run)) break;
    }
    emit({{"event", "done"}});
    return 0;
  } catch (const std::exception& error) {
    emit({{"event", "error"}, {"message", error.what()}});
    return 1;
  }
}

}  // namespace repro_audit
