#include "explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "compare/baseline.h"
#include "explain/cell_sides.h"
#include "explain/knob_search.h"
#include "explain/library_keys.h"
#include "plan/cell_key.h"
#include "report/text_format.h"

namespace repro_audit {
namespace {

using nlohmann::json;

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
