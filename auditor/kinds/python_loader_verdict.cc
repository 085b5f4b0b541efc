#include "kinds/python_loader_verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace repro_audit {
namespace {

constexpr std::size_t kIndicesShown = 8;

std::string list_text(const std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> shown(values.begin(), values.begin() + std::min(values.size(), kIndicesShown));
  return fmt::format("[{}{}]", fmt::join(shown, ", "), values.size() > kIndicesShown ? ", ..." : "");
}

std::string place(const LoaderBatch& batch) { return fmt::format("epoch {} batch {}", batch.epoch, batch.batch); }

// Where `other`'s batches part from `reference`'s; "" where they agree as far as both go.
std::string parting(const LoaderObservation& reference, int process, const LoaderObservation& other,
                    int other_process) {
  const auto count = std::min(reference.batches.size(), other.batches.size());
  for (std::size_t p = 0; p < count; ++p) {
    const auto& a = reference.batches[p];
    const auto& b = other.batches[p];
    if (a.indices != b.indices)
      return fmt::format(
          "the batches part at {}: another order of samples (indices {} in process {}, {} in process {}), so the "
          "shuffling differs",
          place(a), list_text(a.indices), process, list_text(b.indices), other_process);
    if (a.samples == b.samples) continue;
    std::vector<std::int64_t> differing;
    for (std::size_t k = 0; k < std::min(a.samples.size(), b.samples.size()); ++k)
      if (a.samples[k] != b.samples[k])
        differing.push_back(k < a.indices.size() ? a.indices[k] : static_cast<std::int64_t>(k));
    return fmt::format(
        "the batches part at {}: the same samples{} with other content in process {} than in process {} ({} {} "
        "differ), so a sample's content (a random transform, an augmentation) differs",
        place(a), a.indices.empty() ? "" : " " + list_text(a.indices), other_process, process,
        a.indices.empty() ? "samples at positions" : "samples of indices", list_text(differing));
  }
  if (reference.batches.size() != other.batches.size())
    return fmt::format("process {} made {} batches, process {} {}", process, reference.batches.size(), other_process,
                       other.batches.size());
  return "";
}

void repeated_epochs(const LoaderObservation& loader, std::vector<std::string>& findings) {
  std::map<int, std::vector<std::int64_t>> orders;
  for (const auto& batch : loader.batches)
    orders[batch.epoch].insert(orders[batch.epoch].end(), batch.indices.begin(), batch.indices.end());
  if (orders.size() < 2 || orders.begin()->second.empty()) return;
  const auto& first = orders.begin()->second;
  for (const auto& [epoch, order] : orders)
    if (order != first) return;
  if (std::is_sorted(first.begin(), first.end())) return;  // a sequential sampler: one order by design
  findings.push_back(fmt::format(
      "every epoch of the DataLoader gave its samples in one shuffled order ({} ...): its sampler draws the same "
      "permutation each epoch (a generator seeded again at every epoch); seed it once, outside __iter__",
      list_text(std::vector<std::int64_t>(first.begin(), first.begin() + std::min<std::size_t>(first.size(), 4)))));
}

void shared_streams(const LoaderObservation& loader, std::vector<std::string>& findings) {
  std::map<std::string, std::map<std::string, std::vector<int>>> starts;  // source -> state -> workers
  std::map<std::string, std::set<int>> drew;
  for (const auto& worker : loader.workers) {
    for (const auto& [name, state] : worker.start) starts[name][state].push_back(worker.worker);
    for (const auto& name : worker.drawn) drew[name].insert(worker.worker);
  }
  for (const auto& [name, states] : starts)
    for (const auto& [state, workers] : states) {
      std::vector<int> sharing;
      for (const int worker : workers)
        if (drew[name].count(worker)) sharing.push_back(worker);
      if (sharing.size() < 2) continue;
      findings.push_back(fmt::format(
          "the DataLoader's workers {} start {} in one state and draw from it: each draws the same numbers (a "
          "generator made before the workers start, e.g. in the dataset's __init__, is copied into every worker); "
          "seed it per worker in worker_init_fn, e.g. from torch.utils.data.get_worker_info().seed",
          fmt::join(sharing, ", "), name));
    }
}

}  // namespace

void judge_loader(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  const ProcessObservation* reference = nullptr;
  for (const auto& observation : observations)
    if (observation.loader && !observation.runs.empty()) {
      reference = &observation;
      break;
    }
  if (!reference) return;
  if (runs_diverged(verdict))
    for (const auto& observation : observations) {
      if (&observation == reference || !observation.loader) continue;
      const auto text = parting(*reference->loader, reference->process, *observation.loader, observation.process);
      if (text.empty()) continue;
      verdict.origin_note = text;
      break;
    }
  repeated_epochs(*reference->loader, verdict.findings);
  shared_streams(*reference->loader, verdict.findings);
}

}  // namespace repro_audit
