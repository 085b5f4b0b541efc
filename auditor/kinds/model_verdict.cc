#include "kinds/model_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace repro_audit {
namespace {

struct SequenceRef {
  const OpSequence* sequence = nullptr;
  int process = 0;
  int run = 0;  // the first run that produced it
};

std::vector<SequenceRef> distinct_sequences(const std::vector<ProcessObservation>& observations) {
  std::vector<SequenceRef> found;
  std::set<std::string> seen;
  for (const auto& observation : observations)
    for (const auto& sequence : observation.op_sequences) {
      if (!seen.insert(sequence.digest).second) continue;
      int run = 0;
      for (std::size_t r = 0; r < observation.runs.size(); ++r)
        if (observation.runs[r].op_digest == sequence.digest) {
          run = static_cast<int>(r);
          break;
        }
      found.push_back({&sequence, observation.process, run});
    }
  return found;
}

void find_diverged_outputs(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  const auto& reference = observations.front().runs.front().outputs;
  for (std::size_t i = 0; i < reference.size(); ++i)
    for (const auto& observation : observations) {
      const bool differs =
          std::any_of(observation.runs.begin(), observation.runs.end(), [&](const RunObservation& run) {
            return i < run.outputs.size() && run.outputs[i].second != reference[i].second;
          });
      if (differs) {
        verdict.diverged_outputs.push_back(reference[i].first);
        break;
      }
    }
}

// The runs that recorded every op, and how many distinct outputs they gave.
struct RecordedOutputs {
  int runs = 0;
  std::size_t distinct = 0;
};

RecordedOutputs recorded_outputs(const std::vector<ProcessObservation>& observations) {
  RecordedOutputs recorded;
  std::set<std::string> digests;
  for (const auto& observation : observations)
    for (const auto& run : observation.runs)
      if (!run.op_digest.empty()) {
        ++recorded.runs;
        digests.insert(run.digest);
      }
  recorded.distinct = digests.size();
  return recorded;
}

void find_origin(const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  for (const auto& observation : observations)
    if (!observation.per_op_unavailable.empty()) {
      verdict.origin_note = "per-op records: " + observation.per_op_unavailable;
      return;
    }
  const auto sequences = distinct_sequences(observations);
  if (sequences.empty()) {
    verdict.origin_note = "per-op records were off (--per-op off)";
    return;
  }
  if (sequences.size() == 1) {
    const auto ops = sequences.front().sequence->ops.size();
    const auto recorded = recorded_outputs(observations);
    verdict.origin_note =
        recorded.distinct > 1
            ? fmt::format("every run recorded the same {} ops with the same digests, yet the outputs differ", ops)
            : fmt::format(
                  "the {} run(s) that recorded every op agreed, in their outputs and in each of their {} "
                  "ops; only runs without per-op records diverged: the divergence did not happen while ops "
                  "were recorded (more --repeats give it more chances to)",
                  recorded.runs, ops);
    return;
  }
  const auto& reference = sequences.front();
  std::string first_parted, first_no_origin;
  for (std::size_t k = 1; k < sequences.size(); ++k) {
    const auto& other = sequences[k];
    auto comparison = compare_op_sequences(reference.sequence->ops, other.sequence->ops);
    if (first_parted.empty()) first_parted = comparison.parted;
    if (!comparison.origin) {
      if (first_no_origin.empty()) first_no_origin = comparison.no_origin;
      continue;
    }
    if (verdict.origin && verdict.origin->position <= comparison.origin->position) continue;
    auto origin = *comparison.origin;
    origin.compared = fmt::format("process {} run {} vs process {} run {}", reference.process, reference.run,
                                  other.process, other.run);
    verdict.origin = origin;
  }
  if (verdict.origin) {
    const auto name = fmt::format("#{} {}", verdict.origin->position, verdict.origin->op);
    for (const auto& observation : observations)
      if (observation.origin_difference && observation.origin_difference->output == name)
        verdict.origin->difference = observation.origin_difference;
    if (!first_parted.empty()) verdict.origin_note = first_parted;
  } else {
    verdict.origin_note = first_no_origin.empty() ? first_parted : first_no_origin;
    if (!first_parted.empty() && first_parted != verdict.origin_note) verdict.origin_note += "; " + first_parted;
  }
}

double largest(const std::vector<ProcessObservation>& observations, const std::string& output, bool differs) {
  if (!differs) return 0;
  double difference = -1;
  for (const auto& observation : observations)
    for (const auto& measured : observation.output_differences)
      if (measured.output == output && measured.differing_elements >= 0)
        difference = std::max(difference, measured.max_abs_difference);
  return difference;
}

void find_step_growth(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  const auto& diverged = verdict.diverged_outputs;
  const auto did = [&](const std::string& name) {
    return std::find(diverged.begin(), diverged.end(), name) != diverged.end();
  };
  for (int step = 1; step <= cell.model->steps; ++step) {
    const auto loss = step == 1 ? std::string("loss") : fmt::format("loss.step{}", step);
    const auto params = fmt::format("params.step{}", step);
    verdict.steps.push_back({step, largest(observations, loss, did(loss)), largest(observations, params, did(params))});
  }
}

}  // namespace

void judge_model(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict) {
  if (!cell.model || observations.empty() || observations.front().runs.empty()) return;
  if (verdict.kind != VerdictKind::nondeterministic && verdict.digests_agree) return;
  find_diverged_outputs(observations, verdict);
  if (verdict.diverged_outputs.empty()) return;
  find_origin(observations, verdict);
  find_step_growth(cell, observations, verdict);
}

}  // namespace repro_audit
