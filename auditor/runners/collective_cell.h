#pragma once
// A collective cell (kinds/collective_kind.h): this worker is rank 0 of `ranks` cooperating processes.
// It starts the other ranks (`repro-audit rank`, the request on their stdin), waits until each says it
// is joining, then all rendezvous through a c10d FileStore in a private folder and a process group
// bound to loopback (ranks/rank_group.h); rank 0 leads every run (ranks/collective_step.h).
//
// A rank that ends (a crash) ends the cell as crashed, naming the rank and its signal; a rank that
// never joins, or stops answering, ends it as timeout once the cell's share of its time limit for the
// wait (half of it, at most 60 s) has passed: for joining, counted from the cell's start to the
// group's, whatever c10d's rendezvous waits. Every other rank is then ended and reaped; a rank whose
// worker dies dies with it (PR_SET_PDEATHSIG), so none outlives the cell. The temporary folder or the
// rendezvous folder gone, or a rank that cannot start, is the machine's failure (EnvironmentError).
#include "runners/cell_runner.h"

namespace repro_audit {

std::unique_ptr<CellRunner> make_collective_runner();

}  // namespace repro_audit
