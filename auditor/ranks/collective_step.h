#pragma once
// How the ranks of a collective cell take each run in step. Rank 0 (the worker the supervisor
// started) says whether there is a next run with a broadcast; every rank runs the probe's op; then
// each rank's digest of its own outputs goes to every rank (all_gather). Rank 0's run returns its
// outputs plus one output per rank, "rank <r>": rank r's digests, so every run compares every rank's
// bits across runs, and the verdict can say when ranks disagree (kinds/collective_kind.h).
#include "probe/probe.h"
#include "ranks/rank_group.h"

namespace repro_audit {

// Rank 0: one run.
Outputs lead_run(RankGroup& group, const RunFunction& run);
// Rank 0: no more runs; the other ranks' follow_run returns false.
void end_runs(RankGroup& group);
// The other ranks: the next run, or false when rank 0 said there is none.
bool follow_run(RankGroup& group, const RunFunction& run);

// "rank 2": the name of rank r's digest output.
std::string rank_output_name(int rank);

}  // namespace repro_audit
