#include "explain/explain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "compare/baseline.h"
#include "explain/cell_sides.h"
#include "explain/library_keys.h"
#include "plan/cell_key.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

using nlohmann::json;

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

Cell with_knobs(const Cell& cell, const std::vector<Knob>& knobs) {
  Cell changed = cell;
  for (const auto& knob : knobs) changed.settings[knob.setting] = knob.value;
  changed.key = cell_key(cell.probe, cell.variant, cell.device, changed.settings);
  changed.label = knobs_text(knobs);
  return changed;
}

// The audit that shows a cell's bits under its settings: every setting off its default as an axis.
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

struct Search {
  const CellRunner& run;
  const ExplainOptions& options;
  std::function<double()> clock;
  double started = 0;
  Explanation& explanation;

  double elapsed() const { return clock() - started; }

  // Runs the cells (deduplicated by key) and returns their snapshot; records the stage.
  Snapshot run_stage(const std::string& name, const std::vector<Cell>& cells) {
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

  // How many more cells fit in the time limit, by the last stage's pace.
  std::size_t cells_left() const {
    const auto remaining = options.time_limit_seconds - elapsed();
    return remaining <= 0 ? 0 : static_cast<std::size_t>(remaining / seconds_per_cell);
  }

  double seconds_per_cell = 1;
};

bool reproduces(const SnapshotCell* cell, const std::string& digest) {
  return cell && is_reproducible(*cell) && !digest.empty() && cell->digest == digest;
}

// Decides which side this machine reproduces as is and which digest the knobs must reach.
void choose_target(CellExplanation& cell) {
  if (!cell.here_digest.empty() && cell.here_digest == cell.after_digest) {
    cell.side = "after";
  } else if (!cell.here_digest.empty() && cell.here_digest == cell.before_digest) {
    cell.side = "before";
  } else {
    cell.side = "neither";
  }
  cell.target = cell.side == "before" ? "after" : "before";
  cell.target_digest = cell.target == "before" ? cell.before_digest : cell.after_digest;
  if (cell.target_digest.empty() && cell.side == "neither" && !cell.after_digest.empty()) {
    cell.target = "after";
    cell.target_digest = cell.after_digest;
  }
  if (cell.target_digest.empty())
    cell.note =
        fmt::format("this machine gives {}'s bits as is; {}'s runs disagreed, so there are no bits to reproduce",
                    cell.side == "before" ? "BEFORE" : "AFTER", cell.target == "before" ? "BEFORE" : "AFTER");
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

// The stages of the search: the knobs the sides point at (the other side's variables, the settings
// the changed kernels' libraries key on), then every other single knob, then pairs; each stage only
// for the cells no earlier stage explained, while the time limit allows.
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

// The cell under the portable settings, where they apply (the CPU).
std::optional<Cell> portable_cell(const Cell& cell) {
  const auto* capability = find_setting("cpu_capability");
  if (!capability || !applies_to(*capability, cell.device)) return std::nullopt;
  return with_knobs(cell, {{"cpu_capability", "default", "the portable profile"},
                           {"mkl_cbwr", "COMPATIBLE", "the portable profile"}});
}

// Runs the changed cells here under the portable settings: do they give one digest, what would the
// other host run to confirm it, and what does pinning cost here.
void try_portable(Search& search, const std::vector<CellExplanation*>& cells, const std::map<std::string, Cell>& known,
                  const std::map<std::string, SnapshotCell>& as_is, const ExplainOptions& options) {
  std::vector<Cell> batch;
  for (auto* cell : cells) {
    const auto pinned = portable_cell(known.at(cell->key));
    if (!pinned) {
      cell->portable_note = "no portable settings for " + known.at(cell->key).device +
                            ": pin the GPU model and the driver, CUDA, cuDNN and cuBLAS versions (`strict` fixes the "
                            "algorithms)";
      continue;
    }
    batch.push_back(*pinned);
  }
  if (batch.empty()) return;
  const auto seen = search.run_stage("portable settings", batch);
  for (auto* cell : cells) {
    const auto pinned = portable_cell(known.at(cell->key));
    if (!pinned) continue;
    const auto* result = find_snapshot_cell(seen, pinned->key);
    cell->portable_command = audit_command(*pinned, options.executable);
    if (!result || !is_reproducible(*result)) {
      cell->portable_note = fmt::format(
          "not portable here: under cpu_capability=default and mkl_cbwr=COMPATIBLE it {}",
          result ? fmt::format("gave {} {}", to_string(result->verdict), result->message) : std::string("did not run"));
      continue;
    }
    cell->portable_digest = result->digest;
    cell->portable_note =
        result->digest == cell->target_digest
            ? fmt::format("cpu_capability=default and mkl_cbwr=COMPATIBLE give {}'s bits here",
                          cell->target == "before" ? "BEFORE" : "AFTER")
            : fmt::format(
                  "one digest here under cpu_capability=default and mkl_cbwr=COMPATIBLE ({}); the cell is "
                  "portable if the other host gives the same",
                  short_digest(result->digest));
    const auto here = as_is.find(cell->key);
    if (here == as_is.end()) {
      cell->pin_cost = "not measured (no run as is here)";
      continue;
    }
    const auto& plain = here->second.timing;
    const auto& pinned_timing = result->timing;
    cell->pin_cost = cost_text(plain, pinned_timing);
    if (plain.samples > 0 && pinned_timing.samples > 0 && plain.median_ns > 0) {
      cell->pin_ratio = static_cast<double>(pinned_timing.median_ns) / static_cast<double>(plain.median_ns);
      cell->pin_cost_kind = is_slower(plain, pinned_timing, 0.10)   ? "slower"
                            : is_faster(plain, pinned_timing, 0.10) ? "faster"
                                                                    : "no cost";
    }
  }
}

// A cell with a verdict in BEFORE that ended here without one (`here` null: not run at all) goes
// to the explanation's list with why; true when it did.
bool note_not_run_here(Explanation& explanation, const Snapshot& before, const std::string& key,
                       const SnapshotCell* here) {
  const auto* was = find_snapshot_cell(before, key);
  if (!was || is_broken(*was) || (here && !is_broken(*here))) return false;
  explanation.not_run_here.push_back(here ? fmt::format("{}: {} here: {}", key, to_string(here->verdict), here->message)
                                          : key + ": not run here");
  return true;
}

}  // namespace

std::optional<Cell> cell_from_key(const std::string& key, const Catalogue& catalogue,
                                  const std::vector<ModelSpec>& models) {
  const auto parsed = parse_cell_key(key);
  if (!parsed) return std::nullopt;
  const ModelSpec* model = nullptr;
  for (const auto& candidate : models)
    if (model_probe_name(candidate) == parsed->probe) model = &candidate;
  const auto model_info = model ? std::optional<ProbeInfo>(model_probe_info(*model)) : std::nullopt;
  const auto* probe = model_info ? &*model_info : find_probe(catalogue, parsed->probe);
  if (!probe || !probe->find_variant(parsed->variant)) return std::nullopt;
  for (const auto& [name, value] : parsed->settings) {
    const auto* spec = find_setting(name);
    if (!spec || !is_valid_value(*spec, value)) return std::nullopt;
  }
  Cell cell;
  cell.probe = parsed->probe;
  cell.variant = parsed->variant;
  cell.device = parsed->device;
  cell.settings = make_flag_set(parsed->settings, parsed->device);
  cell.key = cell_key(cell.probe, cell.variant, cell.device, cell.settings);
  cell.label = "as is";
  cell.timeout_seconds = probe->timeout_seconds;
  if (model) cell.model = *model;
  return cell;
}

Explanation explain(const Snapshot& before, const std::optional<Snapshot>& after_given, const Catalogue& catalogue,
                    const CellRunner& run, const ExplainOptions& options) {
  Explanation explanation;
  explanation.time_limit_seconds = options.time_limit_seconds;
  auto clock = options.clock;
  if (!clock)
    clock = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  Search search{run, options, clock, options.started.value_or(clock()), explanation};
  explanation.before_source = before.source;

  std::map<std::string, Cell> cells;  // BEFORE's cells this build knows, by key
  std::vector<Cell> in_order;
  for (const auto& cell : before.cells)
    if (auto known = cell_from_key(cell.key, catalogue, before.models)) {
      cells.emplace(cell.key, *known);
      in_order.push_back(*known);
    }
  std::map<std::string, std::string> here;         // key -> this machine's digest as is ("" when not reproducible)
  std::map<std::string, SnapshotCell> here_cells;  // key -> this machine's cell as is
  Snapshot after;
  if (after_given) {
    after = *after_given;
  } else {
    after = search.run_stage("audit of this machine", in_order);
    after.source = "this machine";
    for (const auto& cell : after.cells) {
      here[cell.key] = is_reproducible(cell) ? cell.digest : "";
      here_cells[cell.key] = cell;
      note_not_run_here(explanation, before, cell.key, &cell);
    }
  }
  explanation.after_source = after.source;
  explanation.comparison = compare_snapshots(before, after);
  explanation.compared = count_compared(explanation.comparison);

  std::vector<CellExplanation*> open;
  for (const auto& compared : explanation.comparison.cells) {
    if (!compared.has(Change::drift) && !compared.has(Change::new_nondeterminism)) continue;
    CellExplanation cell;
    cell.key = compared.key;
    cell.change = compared.has(Change::drift) ? Change::drift : Change::new_nondeterminism;
    cell.before_digest = is_reproducible(*compared.before) ? compared.before->digest : "";
    cell.after_digest = is_reproducible(*compared.after) ? compared.after->digest : "";
    if (!cells.count(cell.key)) cell.note = "this build cannot run the cell (unknown probe, variant or setting)";
    describe_sides(cell, before, after, explanation.comparison, compared);
    explanation.cells.push_back(std::move(cell));
  }
  for (auto& cell : explanation.cells)
    if (cell.note.empty()) open.push_back(&cell);

  // As is: which side does this machine reproduce?
  if (after_given && !open.empty()) {
    std::vector<Cell> as_is;
    for (const auto* cell : open) as_is.push_back(cells.at(cell->key));
    const auto seen = search.run_stage("as is", as_is);
    for (auto* cell : open) {
      const auto* result = find_snapshot_cell(seen, cell->key);
      here[cell->key] = result && is_reproducible(*result) ? result->digest : "";
      if (result) here_cells[cell->key] = *result;
      if (note_not_run_here(explanation, before, cell->key, result)) cell->note = "it could not be run here";
    }
    std::erase_if(open, [](const CellExplanation* cell) { return !cell->note.empty(); });
  }
  for (auto* cell : open) {
    cell->here_digest = here[cell->key];
    choose_target(*cell);
  }
  try_portable(search, open, cells, here_cells, options);
  std::erase_if(open, [](const CellExplanation* cell) { return cell->target_digest.empty(); });

  search_knobs(search, open, cells, before, after, options);
  for (auto* cell : open)
    if (!cell->explained)
      cell->note = fmt::format("not explained by any knob tried{}",
                               explanation.time_limit_reached ? " (the time limit stopped the search)" : "");
  explanation.seconds = search.elapsed();
  return explanation;
}

bool explanation_failed(const Explanation& explanation) {
  if (explanation.compared == 0) return true;
  return std::any_of(explanation.cells.begin(), explanation.cells.end(),
                     [](const CellExplanation& cell) { return !cell.explained; });
}

}  // namespace repro_audit
