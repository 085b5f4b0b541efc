#include "plan/shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "common/user_error.h"

namespace repro_audit {
namespace {

// Making a cell's inputs and reporting it, in milliseconds: what a cell costs beyond its runs.
constexpr double kCellOverheadMs = 20;

std::optional<long long> whole_number(const std::string& text) {
  long long value = 0;
  const auto* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || at != end) return std::nullopt;
  return value;
}

// The variable's value as a number; nullopt when unset or empty; UserError when not a number.
std::optional<long long> number_variable(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* value = getenv(name);
  if (!value || !*value) return std::nullopt;
  const auto number = whole_number(value);
  if (!number) throw UserError(fmt::format("{}={} is not a whole number", name, value));
  return number;
}

ShardSpec checked(long long index, long long count, std::string source, const std::string& what) {
  if (count < 1 || index < 1 || index > count)
    throw UserError(fmt::format("{}: shard {} of {} is not a shard (K/N with 1 <= K <= N)", what, index, count));
  return {static_cast<int>(index), static_cast<int>(count), std::move(source)};
}

std::optional<ShardSpec> slurm_shard(const std::function<const char*(const char*)>& getenv) {
  const auto id = number_variable(getenv, "SLURM_ARRAY_TASK_ID");
  if (!id) return std::nullopt;
  const auto count = number_variable(getenv, "SLURM_ARRAY_TASK_COUNT");
  const auto minimum = number_variable(getenv, "SLURM_ARRAY_TASK_MIN");
  if (!count || !minimum)
    throw UserError(
        fmt::format("SLURM_ARRAY_TASK_ID={} is set without SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN", *id));
  // An array like 0-10:2 steps its ids; its tasks are still 1..count in order.
  const auto step = number_variable(getenv, "SLURM_ARRAY_TASK_STEP").value_or(1);
  if (step < 1 || (*id - *minimum) % step != 0)
    throw UserError(
        fmt::format("SLURM_ARRAY_TASK_ID={} is not on the array's steps (min {}, step {})", *id, *minimum, step));
  return checked((*id - *minimum) / step + 1, *count, "slurm",
                 fmt::format("SLURM_ARRAY_TASK_ID={} (min {}, count {})", *id, *minimum, *count));
}

std::optional<ShardSpec> kubernetes_shard(const std::function<const char*(const char*)>& getenv,
                                          std::optional<int> shards) {
  const auto index = number_variable(getenv, "JOB_COMPLETION_INDEX");
  if (!index) return std::nullopt;
  if (!shards)
    throw UserError(fmt::format(
        "JOB_COMPLETION_INDEX={} is set (a Kubernetes Indexed Job) but the shard count is not: give --shards N (the "
        "Job's completions), or --shard-from none to audit the whole plan",
        *index));
  return checked(*index + 1, *shards, "kubernetes",
                 fmt::format("JOB_COMPLETION_INDEX={} with --shards {}", *index, *shards));
}

std::optional<ShardSpec> rank_shard(const std::function<const char*(const char*)>& getenv) {
  const auto rank = number_variable(getenv, "RANK");
  const auto world = number_variable(getenv, "WORLD_SIZE");
  if (!rank && !world) return std::nullopt;
  if (!rank || !world) throw UserError("--shard-from env: RANK and WORLD_SIZE must both be set");
  return checked(*rank + 1, *world, "env", fmt::format("RANK={} WORLD_SIZE={}", *rank, *world));
}

}  // namespace

ShardSpec parse_shard(const std::string& text, const std::string& where) {
  const auto slash = text.find('/');
  const auto index = whole_number(text.substr(0, slash));
  const auto count = slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
  if (!index || !count) throw UserError(fmt::format("{}: expected K/N, e.g. 2/3, but got '{}'", where, text));
  return checked(*index, *count, where, where);
}

std::optional<ShardFrom> shard_from_from_string(const std::string& text) {
  if (text == "scheduler") return ShardFrom::scheduler;
  if (text == "env") return ShardFrom::env;
  if (text == "none") return ShardFrom::none;
  return std::nullopt;
}

std::optional<ShardSpec> shard_from_environment(const std::function<const char*(const char*)>& getenv, ShardFrom from,
                                                std::optional<int> shards) {
  std::optional<ShardSpec> shard;
  switch (from) {
    case ShardFrom::none:
      return std::nullopt;
    case ShardFrom::env:
      shard = rank_shard(getenv);
      if (!shard) throw UserError("--shard-from env: RANK and WORLD_SIZE are not set");
      break;
    case ShardFrom::scheduler:
      shard = slurm_shard(getenv);
      if (!shard) shard = kubernetes_shard(getenv, shards);
      break;
  }
  if (shard && shards && *shards != shard->count)
    throw UserError(
        fmt::format("--shards {} disagrees with the {} environment's {} shards", *shards, shard->source, shard->count));
  return shard;
}

std::vector<double> expected_cell_costs(const std::vector<Cell>& cells, const Catalogue& catalogue,
                                        int runs_per_process, const std::map<std::string, std::int64_t>& timings) {
  std::vector<double> declared(cells.size(), 1.0);
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (const auto* probe = find_probe(catalogue, cells[i].probe)) declared[i] = probe->weight_of(cells[i].variant);
  // Declared weights are milliseconds on some CPU; measured ones say what a millisecond of weight
  // costs here: the median of measured over declared.
  std::vector<double> scales;
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (const auto it = timings.find(cells[i].key); it != timings.end() && it->second > 0)
      scales.push_back(static_cast<double>(it->second) / 1e6 / declared[i]);
  double scale = 1;
  if (!scales.empty()) {
    std::nth_element(scales.begin(), scales.begin() + scales.size() / 2, scales.end());
    scale = scales[scales.size() / 2];
  }
  std::vector<double> costs(cells.size(), 0.0);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].unsupported_reason.empty()) continue;  // never runs
    const auto it = timings.find(cells[i].key);
    const double run_ms =
        it != timings.end() && it->second > 0 ? static_cast<double>(it->second) / 1e6 : declared[i] * scale;
    costs[i] = (kCellOverheadMs + run_ms * runs_per_process) / 1e3;
  }
  return costs;
}

double share_budget(std::vector<Cell>& cells, const std::vector<double>& costs, int processes, int workers,
                    double budget_seconds) {
  double total = 0;
  for (std::size_t i = 0; i < cells.size() && i < costs.size(); ++i) total += costs[i];
  const double floor_seconds = 0.01 * static_cast<double>(cells.size());
  const double left = std::max(floor_seconds, 0.9 * budget_seconds - kWorkerStartSeconds * workers);
  for (std::size_t i = 0; i < cells.size() && i < costs.size(); ++i)
    cells[i].budget_seconds =
        total > 0 ? std::max(0.01, left * costs[i] / total / std::max(1, processes)) : left / cells.size();
  return left;
}

std::vector<int> partition_cells(const std::vector<double>& costs, int count) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(std::max(count, 1)), 0.0);
  std::vector<int> shard(costs.size(), 0);
  for (const auto i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();  // first of equals
    shard[i] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += costs[i];
  }
  return shard;
}

}  // namespace repro_audit
