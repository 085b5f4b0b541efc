#pragma once
// Sharding a plan: which cells shard K of N runs. The partition is a pure function of the plan, the
// cells' expected costs and N, so every host and every run of one config agrees on it.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "plan/plan.h"

namespace repro_audit {

struct ShardSpec {
  int index = 1;  // 1..count
  int count = 1;
  std::string source;  // "--shard", "slurm", "kubernetes", "env"
};

// "K/N" with 1 <= K <= N; throws UserError naming `where`.
ShardSpec parse_shard(const std::string& text, const std::string& where);

// Where a shard comes from when --shard is not given: the scheduler's environment (Slurm job arrays,
// Kubernetes Indexed Jobs), torchrun-style RANK/WORLD_SIZE (only on request), or nowhere.
enum class ShardFrom { scheduler, env, none };
inline constexpr const char* kShardFromNames = "scheduler, env, none";
std::optional<ShardFrom> shard_from_from_string(const std::string& text);

// The shard the environment names, if any. `shards` is --shards N (Kubernetes gives no count).
// Throws UserError when the environment names a shard it cannot make whole (an index without a
// count, an index outside the count, a value that is not a number).
std::optional<ShardSpec> shard_from_environment(const std::function<const char*(const char*)>& getenv, ShardFrom from,
                                                std::optional<int> shards);

// Expected seconds of each cell: measured (`timings`: median ns of one run, by cell key, from an
// earlier report) where known, else the probe's declared weight scaled to the measured cells (or
// taken as milliseconds when nothing was measured); plus a fixed share for making the cell's inputs.
std::vector<double> expected_cell_costs(const std::vector<Cell>& cells, const Catalogue& catalogue,
                                        int runs_per_process, const std::map<std::string, std::int64_t>& timings);

// --budget: each cell's share of `budget_seconds` per process (Cell::budget_seconds), in proportion to
// its expected cost, after `workers` worker starts of kWorkerStartSeconds each and a tenth of the budget
// kept for judging and writing. Returns the seconds left to share (at least 10 ms per cell).
inline constexpr double kWorkerStartSeconds = 0.5;
double share_budget(std::vector<Cell>& cells, const std::vector<double>& costs, int processes, int workers,
                    double budget_seconds);

// Each cell's shard (0-based), longest expected cost first onto the least loaded shard (ties: the
// lower plan position, the lower shard).
std::vector<int> partition_cells(const std::vector<double>& costs, int count);

}  // namespace repro_audit
