#include "kinds/python_randomness.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace repro_audit {
namespace {

std::string drawn_text(const RandomSourceVerdict& source) {
  if (source.drawn_in_factory && source.drawn_in_runs) return "drawn by the factory and the runs";
  return source.drawn_in_factory ? "drawn by the factory" : "drawn by the runs";
}

std::string seeded_text(const RandomSourceVerdict& source) {
  if (source.seeded == "alike") return "seeded alike: one state after the factory in every process";
  if (source.seeded == "differs") return "not seeded alike: its state after the factory differs between processes";
  if (source.seeded == "runner") return "seeded by repro-audit with the cell's seed before every run";
  return "seen in one process: whether it is seeded alike is not known (--processes 2 or more checks it)";
}

std::string what(const RandomSourceVerdict& source) {
  if (source.where == "global") {
    if (source.name == "random") return "Python's global generator (random)";
    if (source.name == "numpy.random") return "NumPy's global RNG (numpy.random)";
    return source.name;
  }
  return fmt::format("{} (a {}, {})", source.name, source.kind, source.where);
}

// The processes that ran, grouped by the digest of their string hashes: the groups hashed strings alike.
std::map<std::string, std::vector<const ProcessObservation*>> hash_groups(
    const std::vector<ProcessObservation>& observations) {
  std::map<std::string, std::vector<const ProcessObservation*>> groups;
  for (const auto& observation : observations)
    if (!observation.runs.empty() && !observation.hash_probe.empty())
      groups[observation.hash_probe].push_back(&observation);
  return groups;
}

std::set<std::string> digests_of(const std::vector<const ProcessObservation*>& group) {
  std::set<std::string> digests;
  for (const auto* observation : group)
    for (const auto& run : observation->runs)
      if (!run.digest.empty()) digests.insert(run.digest);
  return digests;
}

std::string hash_seed_cause(const std::vector<ProcessObservation>& observations, const Verdict& verdict) {
  if (verdict.divergence_scope != "across-processes") return "";
  const auto groups = hash_groups(observations);
  if (groups.size() < 2) return "";
  // Within a group of processes that hashed alike, one digest; between groups, others.
  bool shared_group_agrees = false;
  for (const auto& [probe, group] : groups) {
    if (digests_of(group).size() != 1) return "";
    if (group.size() > 1) shared_group_agrees = true;
  }
  std::string seeds;
  for (const auto& observation : observations)
    if (!observation.runs.empty()) {
      seeds = observation.hash_seed.empty() ? "PYTHONHASHSEED unset: each process drew its own"
                                            : "PYTHONHASHSEED=" + observation.hash_seed;
      break;
    }
  return fmt::format(
      "the processes hashed strings with different seeds ({}); each process's runs agree{} and no random source the "
      "step drew from differs, so {}the order of a set or dict of strings, and what follows from it, changes with "
      "the hash seed; fix it: PYTHONHASHSEED=0 in the environment (the setting python_hash_seed=0 shows it)",
      seeds, shared_group_agrees ? ", processes that hashed alike agree," : "",
      shared_group_agrees ? "" : "most likely (no two processes hashed alike to confirm it) ");
}

}  // namespace

void judge_randomness(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  std::vector<RandomSourceVerdict> sources;
  // By source name: its state after the factory in each process that drew from it.
  std::map<std::string, std::map<int, std::string>> states;
  for (const auto& observation : observations)
    for (const auto& source : observation.random_sources) {
      auto found = std::find_if(sources.begin(), sources.end(),
                                [&](const RandomSourceVerdict& known) { return known.name == source.name; });
      if (found == sources.end()) {
        RandomSourceVerdict added;
        added.name = source.name;
        added.kind = source.kind;
        added.where = source.where;
        added.recipe = source.recipe;
        added.seeded = source.seeded_by_runner ? "runner" : "";
        sources.push_back(added);
        found = sources.end() - 1;
      }
      found->drawn_in_factory = found->drawn_in_factory || source.drawn_in_factory;
      found->drawn_in_runs = found->drawn_in_runs || source.drawn_in_runs;
      states[source.name][observation.process] = source.state;
    }
  for (auto& source : sources) {
    if (source.seeded == "runner") continue;
    const auto& by_process = states[source.name];
    std::set<std::string> distinct;
    for (const auto& [process, state] : by_process) distinct.insert(state);
    source.seeded = distinct.size() > 1 ? "differs" : by_process.size() > 1 ? "alike" : "unknown";
  }
  verdict.random_sources = sources;
  if (!runs_diverged(verdict)) return;
  std::vector<std::string> causes;
  for (const auto& source : sources)
    if (source.seeded == "differs")
      causes.push_back(fmt::format("{}, {}{}", what(source), drawn_text(source),
                                   source.recipe.empty() ? "" : "; seed it: " + source.recipe));
  if (!causes.empty()) {
    verdict.cause = fmt::format("the step drew from {} not seeded alike in every process: {}",
                                causes.size() == 1 ? "a random source" : "random sources", fmt::join(causes, "; "));
    return;
  }
  verdict.cause = hash_seed_cause(observations, verdict);
}

std::vector<std::string> randomness_lines(const Verdict& verdict) {
  std::vector<std::string> lines;
  if (!verdict.cause.empty()) lines.push_back("cause: " + verdict.cause);
  for (const auto& finding : verdict.findings) lines.push_back("found: " + finding);
  for (const auto& source : verdict.random_sources)
    lines.push_back(fmt::format("random source: {}: {}; {}", what(source), drawn_text(source), seeded_text(source)));
  return lines;
}

}  // namespace repro_audit
