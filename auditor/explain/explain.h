#pragma once
// `explain`: for each cell whose bits changed between two snapshots, re-run it here under knob changes
// and find the smallest set that reproduces the other side's digest. Torch-free: the cells are run by
// a runner the caller gives (an audit of worker processes, or a fake in tests).
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/kernel_change.h"
#include "config/catalogue.h"
#include "plan/plan.h"
#include "report/report.h"

namespace repro_audit {

// One setting moved to one value.
struct Knob {
  std::string setting;
  std::string value;
  std::string reason;  // why it is a candidate: "BEFORE ran with ATEN_CPU_CAPABILITY=default", "settings table"
  // How directly the sides point at it: 0 the other side's variable or the ISA its kernels name, 1 another
  // value of a setting the changed kernels' library keys on, 2 the settings table. The search's stages.
  int rank = 2;
};

struct CellExplanation {
  std::string key;
  Change change = Change::drift;  // drift or new_nondeterminism
  std::string before_digest;      // empty when the runs disagreed
  std::string after_digest;
  std::string here_digest;  // this machine, as is ("" when its runs disagreed or it failed)
  std::string side;         // which snapshot this machine reproduces as is: "before", "after" or "neither"
  std::string target;       // the snapshot whose bits the knobs must reproduce: "before" or "after"
  std::string target_digest;
  bool explained = false;
  std::vector<Knob> knobs;  // the smallest set found; empty when none
  int tried = 0;            // candidate cells run for this cell
  std::string pin;          // "pin ATEN_CPU_CAPABILITY=default on both to get identical bits"
  std::string command;      // the audit that shows it: "repro-audit run --probe sum/f32 --matrix full ..."
  std::string note;         // why it is not explained, or what could not be tried
  // What changed besides the bits, whether or not a knob explains them:
  std::string inputs;   // "equal", "different (...)" or "not recorded" (input digests)
  std::string kernels;  // "the same", "MKL code path AVX2 -> ...; ...", "changed (names not recorded ...)"
  std::vector<KernelChange> kernel_changes;  // by name, from the sides' kernel sequences
  std::vector<std::string> keyed_on;         // per library whose kernels changed: the fields it keys on
  std::vector<std::string> library_pins;     // per library whose kernels changed: what pins its choice
  // The cell here under the portable settings (the `portable` profile on the CPU): its digest ("" when
  // not run or its runs disagreed), what that says, the command that checks it on the other host, and
  // what the pinning costs here (its median against the cell's as is, outside the noise or not).
  std::string portable_digest;
  std::string portable_note;
  std::string portable_command;
  std::string pin_cost;
  double pin_ratio = 0;       // the portable median over the median as is; 0 when not measured
  std::string pin_cost_kind;  // "slower", "faster", "no cost" (within the noise); "" when not measured
};

struct Explanation {
  std::string before_source;
  std::string after_source;  // "this machine" when the audit ran now
  Comparison comparison;     // before against after: the environment diff and the classes
  std::vector<CellExplanation> cells;
  int compared = 0;         // cells with a verdict on both sides
  int candidate_cells = 0;  // cells run while searching, over every stage
  double seconds = 0;       // the search's time, the audit of AFTER included when it ran now
  double time_limit_seconds = 0;
  bool time_limit_reached = false;
  std::string stopped_early;        // why the search ended before its last stage ("" when it did not)
  std::vector<std::string> stages;  // "as is: 3 cells, 1.2 s", "single knobs: 22 cells, 5.1 s", ...
  // "KEY: why" for each cell with a verdict in BEFORE that ended here without one (an error, a crash,
  // its time limit: a py callable that no longer imports): nothing is known of its bits here.
  std::vector<std::string> not_run_here;
};

// Runs the cells here, stopping once `seconds_left` have passed, and returns a report of those that
// finished (only the cells' verdicts are read): a cell it had no time for is not in it.
using CellRunner = std::function<Report(const std::vector<Cell>& cells, double seconds_left)>;

struct ExplainOptions {
  double time_limit_seconds = 600;
  std::vector<std::string> runnable_capabilities;  // ATEN_CPU_CAPABILITY values this CPU runs
  nlohmann::json here;                             // this machine's fingerprint
  std::function<double()> clock;                   // seconds; a steady clock when empty
  std::optional<double> started;                   // the clock when the command started; the call when absent
  std::string executable = "repro-audit";          // for the commands it prints
};

// A cell for `key` with the settings it names (the rest at their defaults); nullopt when the key is
// malformed or names a probe, variant or setting this build does not have.
std::optional<Cell> cell_from_key(const std::string& key, const Catalogue& catalogue,
                                  const std::vector<ModelSpec>& models = {});

// Candidate knobs for a cell, most likely first: those the environment diff points at (the other
// side's ATEN_CPU_CAPABILITY, MKL_CBWR, ONEDNN_MAX_CPU_ISA, capability in force), then the settings the
// changed kernels' libraries key on (explain/library_keys.h; the `target` side's ISA first where the
// kernels name it: "jit:avx2" -> onednn_max_cpu_isa=AVX2), then every other value of every setting that
// applies to the device (reason "settings table").
std::vector<Knob> candidate_knobs(const Cell& cell, const nlohmann::json& other_environment,
                                  const ExplainOptions& options, const std::vector<KernelChange>& kernel_changes = {},
                                  const std::string& target = "before");

// `after` absent: the cells of `before` are audited here first and stand for AFTER.
Explanation explain(const Snapshot& before, const std::optional<Snapshot>& after, const Catalogue& catalogue,
                    const CellRunner& run, const ExplainOptions& options);

// Exit rule: 0 when every changed cell is explained (or none changed), 1 when one is not or nothing
// was compared.
bool explanation_failed(const Explanation& explanation);

}  // namespace repro_audit
