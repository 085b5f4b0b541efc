// The search's stages, and the stages that try knobs on the changed cells (explain/knob_search.h).
#include "explain/knob_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "plan/cell_key.h"

namespace repro_audit {
namespace {

// "ATEN_CPU_CAPABILITY=default", "unset MKL_CBWR", "threads=1".
std::string pin_text(const Knob& knob) {
  const auto* spec = find_setting(knob.setting);
  if (!spec || spec->environment_variable.empty()) return knob.setting + "=" + knob.value;
  if (knob.value == kUnset || knob.value == spec->removed_by) return "unset " + spec->environment_variable;
  return spec->environment_variable + "=" + knob.value;
}

std::string knobs_text(const std::vector<Knob>& knobs) {
  std::vector<std::string> parts;
  for (const auto& knob : knobs) parts.push_back(knob.setting + "=" + knob.value);
  return fmt::format("{}", fmt::join(parts, " and "));
}

bool reproduces(const SnapshotCell* cell, const std::string& digest) {
  return cell && is_reproducible(*cell) && !digest.empty() && cell->digest == digest;
}

void conclude(CellExplanation& cell, const Cell& base, const std::vector<Knob>& knobs, const ExplainOptions& options) {
  cell.explained = true;
  cell.knobs = knobs;
  std::vector<std::string> pins;
  for (const auto& knob : knobs) pins.push_back(pin_text(knob));
  cell.pin = fmt::format("pin {} on both to get identical bits", fmt::join(pins, " and "));
  cell.command = audit_command(with_knobs(base, knobs), options.executable);
  cell.note.clear();
}

}  // namespace

Cell with_knobs(const Cell& cell, const std::vector<Knob>& knobs) {
  Cell changed = cell;
  for (const auto& knob : knobs) changed.settings[knob.setting] = knob.value;
  changed.key = cell_key(cell.probe, cell.variant, cell.device, changed.settings);
  changed.label = knobs_text(knobs);
  return changed;
}

std::string audit_command(const Cell& cell, const std::string& executable) {
  std::string command = fmt::format("{} run --probe {}/{}", executable, cell.probe, cell.variant);
  if (cell.device != "cpu") command += " --device " + cell.device;
  std::vector<std::string> axes;
  for (const auto& [name, value] : cell.settings) {
    const auto* spec = find_setting(name);
    if (value == kNotApplicable || !spec) continue;
    if (value != spec->default_value || spec->portability == PortabilityRole::threads)
      axes.push_back(fmt::format("--axis {}={}", name, value));
  }
  if (axes.empty()) return command + " --profile default";
  return fmt::format("{} --matrix full {}", command, fmt::join(axes, " "));
}

Snapshot Search::run_stage(const std::string& name, const std::vector<Cell>& cells) {
  std::vector<Cell> unique;
  std::set<std::string> keys;
  for (const auto& cell : cells)
    if (keys.insert(cell.key).second) unique.push_back(cell);
  const auto before = elapsed();
  // The time limit bounds the whole command: a stage gets what is left of it, and stops there.
  const auto left = options.time_limit_seconds - before;
  if (left <= 0) {
    explanation.time_limit_reached = true;
    explanation.stages.push_back(fmt::format("{}: not run, the time limit was reached", name));
    return baseline_from_report(Report{}, "this machine");
  }
  const auto report = run(unique, left);
  if (report.cells.size() < unique.size()) explanation.time_limit_reached = true;
  explanation.candidate_cells += static_cast<int>(unique.size());
  explanation.stages.push_back(fmt::format("{}: {} cells, {:.1f} s", name, unique.size(), elapsed() - before));
  seconds_per_cell = std::max(0.001, (elapsed() - before) / std::max<std::size_t>(1, unique.size()));
  return baseline_from_report(report, "this machine");
}

std::size_t Search::cells_left() const {
  const auto remaining = options.time_limit_seconds - elapsed();
  return remaining <= 0 ? 0 : static_cast<std::size_t>(remaining / seconds_per_cell);
}

void search_knobs(Search& search, const std::vector<CellExplanation*>& open, const std::map<std::string, Cell>& cells,
                  const Snapshot& before, const Snapshot& after, const ExplainOptions& options) {
  std::map<std::string, std::vector<Knob>> singles;
  for (const auto* cell : open)
    singles[cell->key] =
        candidate_knobs(cells.at(cell->key), cell->target == "before" ? before.environment : after.environment, options,
                        cell->kernel_changes, cell->target);
  // Stages 0-2: single knobs of that rank (Knob::rank); stage 3: pairs.
  constexpr int kPairs = 3;
  static const char* const kStageNames[] = {"knobs the environment and kernels name",
                                            "other values of the settings the changed kernels key on",
                                            "other single knobs", "pairs of knobs"};
  int last_ran = -1;  // the last stage that ran cells
  for (int stage = 0; stage <= kPairs; ++stage) {
    std::vector<std::pair<CellExplanation*, std::vector<Knob>>> tries;
    for (auto* cell : open) {
      if (cell->explained) continue;
      const auto& knobs = singles[cell->key];
      for (std::size_t i = 0; i < knobs.size(); ++i) {
        if (stage < kPairs && knobs[i].rank == stage) tries.push_back({cell, {knobs[i]}});
        for (std::size_t j = i + 1; stage == kPairs && j < knobs.size(); ++j)
          if (knobs[i].setting != knobs[j].setting) tries.push_back({cell, {knobs[i], knobs[j]}});
      }
    }
    const bool all_explained =
        std::all_of(open.begin(), open.end(), [](const CellExplanation* cell) { return cell->explained; });
    if (all_explained) {
      if (last_ran < 0) break;  // nothing was searched
      std::vector<std::string> skipped;
      for (int later = stage; later <= kPairs; ++later) skipped.push_back(kStageNames[later]);
      search.explanation.stopped_early = fmt::format("every changed cell was explained by the {}: {} were not tried",
                                                     kStageNames[last_ran], fmt::join(skipped, ", "));
      break;
    }
    if (tries.empty()) continue;
    // Cells of different probes interleave, so a limit cuts every cell's list, not the last cell's.
    std::stable_sort(tries.begin(), tries.end(), [&](const auto& a, const auto& b) {
      auto rank = [&](const auto& entry) {
        const auto& list = singles[entry.first->key];
        return std::find_if(list.begin(), list.end(),
                            [&](const Knob& knob) {
                              return knob.setting == entry.second.back().setting &&
                                     knob.value == entry.second.back().value;
                            }) -
               list.begin();
      };
      return rank(a) < rank(b);
    });
    const auto fit = search.cells_left();
    if (fit < tries.size()) {
      search.explanation.time_limit_reached = true;
      tries.resize(fit);
    }
    if (tries.empty()) break;
    std::vector<Cell> batch;
    for (const auto& [cell, knobs] : tries) batch.push_back(with_knobs(cells.at(cell->key), knobs));
    const auto seen = search.run_stage(kStageNames[stage], batch);
    last_ran = stage;
    for (const auto& [cell, knobs] : tries) {
      ++cell->tried;
      if (cell->explained) continue;
      if (reproduces(find_snapshot_cell(seen, with_knobs(cells.at(cell->key), knobs).key), cell->target_digest))
        conclude(*cell, cells.at(cell->key), knobs, options);
    }
  }
}

}  // namespace repro_audit
