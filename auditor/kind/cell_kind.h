#pragma once
// A kind of cell: repeat-and-digest probes, invariance probes, model audits. The shared pipeline
// (plan, supervisor, worker, verdict, report, printers, baseline, repro) asks a cell's kind what to do
// instead of testing what the cell is. This folder is the interface and the lookup, below everything
// that asks: it includes nothing of the project but config/catalogue.h. The kinds themselves are one
// file pair each in kinds/ (`<kind>_kind.{h,cc}`, the torch-free rules), which sits above the folders
// it uses (verdict/, report/, compare/, repro/), and their runners in runners/ (`<kind>_cell.cc`: what
// a worker runs and measures), each registered by one row in a table: kinds/cell_kinds.cc (the one
// definition of cell_kinds() below) and runners/cell_runners.cc.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "config/catalogue.h"

namespace repro_audit {

struct Cell;
struct CellReport;
struct Portability;
struct ProcessObservation;
struct Report;
struct ReproCell;
struct Verdict;
struct Snapshot;  // compare/baseline.h: a Baseline

class CellKind {
 public:
  virtual ~CellKind() = default;

  // Its name: "repeat", "invariance", "model".
  virtual const char* name() const = 0;
  // Whether `cell` is of this kind; the table asks the kinds in order, the last one takes every cell.
  virtual bool claims(const Cell& cell) const = 0;
  // What is wrong with the kind's own fields of a cell read from a file; "" when nothing is.
  virtual std::string grammar_problem(const Cell&) const { return ""; }

  // The worker: its runs stop at the first digest that differs from run 0's (the verdict is then certain).
  virtual bool stops_at_first_difference() const { return true; }
  // Timing-only runs after the determinism runs, and later timing rounds; false: its runs are its timings.
  virtual bool has_timing_runs() const { return true; }
  // The repeats after the warm-up it runs, of those the audit asked for (a cell documented as possibly
  // diverging may run more: verdict/cell_runs.h).
  virtual int repeats(int requested) const { return requested; }
  // The digested runs its runner adds after those, where it can add them (a model's runs without per-op
  // digests, made only when its per-op records are); 0: none.
  virtual int extra_runs(const Cell&, int /*repeats*/) const { return 0; }

  // The verdict: the rules the kind adds once the digests were judged (verdict/verdict.h).
  virtual void judge(const Cell&, const std::vector<ProcessObservation>&, Verdict&) const {}
  // What PyTorch documents for the cell (`probe`: the catalogue's entry, null when it has none).
  virtual Documented documented(const Cell& cell, const ProbeInfo* probe) const = 0;
  // The lines every printer adds for the kind, after the verdict's own.
  virtual std::vector<std::string> detail_lines(const Verdict&) const { return {}; }
  // A level the kind measures beside the portability ladder, over one variant's cells.
  virtual void judge_portability(const std::vector<const CellReport*>&, Portability&) const {}

  // A baseline made from a report keeps what the kind needs to audit the cell again (a model's spec).
  virtual void add_to_baseline(const CellReport&, Snapshot& /*baseline*/) const {}

  // `repro`: why the cell cannot be exported by this build ("" when it can), and its files, written
  // into `folder` from what the export-inputs worker answered.
  // (What a registered probe's cell does for documented() and these two: kinds/probe_cell_kind.h.)
  virtual std::string repro_skip_reason(const CellReport& cell, const ProbeInfo* probe) const = 0;
  virtual void write_repro(const Report& report, ReproCell& repro, const nlohmann::json& answer,
                           const std::filesystem::path& folder) const = 0;
  // Where the export-inputs worker stops a run to capture the arguments of the op the divergence
  // starts at (its place in the order ops began); -1: nothing to capture.
  virtual std::int64_t repro_origin_start(const CellReport&) const { return -1; }
};

// The kinds in the order they are asked, the last one taking every cell the others leave: defined by
// the table in kinds/cell_kinds.cc.
const std::vector<const CellKind*>& cell_kinds();
// The first kind that claims `cell` (cell_kind.cc).
const CellKind& kind_of(const Cell& cell);

}  // namespace repro_audit
