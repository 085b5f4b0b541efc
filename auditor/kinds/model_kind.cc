#include "kinds/model_kind.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/atomic_file.h"
#include "compare/baseline.h"
#include "kinds/model_text.h"
#include "kinds/model_verdict.h"
#include "plan/cell_grammar.h"
#include "report/report.h"
#include "repro/export.h"
#include "repro/python_script.h"

namespace repro_audit {
namespace {

// Where a model cell's divergence starts, in its first process's first op sequence: the op's place in
// the order ops began, which the export's own run counts to; -1 when there is none to export.
std::int64_t origin_start(const CellReport& cell) {
  const auto& origin = cell.verdict.origin;
  if (!cell.cell.model || !origin || cell.observations.empty() || cell.observations.front().op_sequences.empty())
    return -1;
  const auto& ops = cell.observations.front().op_sequences.front().ops;
  if (origin->position < 0 || origin->position >= static_cast<int>(ops.size())) return -1;
  return ops[static_cast<std::size_t>(origin->position)].start;
}

void write_model_cell(const Report& report, ReproCell& repro, const nlohmann::json& answer,
                      const std::filesystem::path& folder) {
  const auto& cell = *repro.cell;
  ModelExport exported;
  write_script_file(folder / "repro.py", model_script(repro, answer.value("named", std::vector<std::string>{}),
                                                      answer.value("package", false)));
  if (answer.contains("origin")) {
    const auto& origin = answer.at("origin");
    exported.origin = CapturedOrigin{origin.at("name"), origin.at("overload"), origin.at("arguments"),
                                     repro_inputs_of(origin.at("tensors")), describe_origin_op(*cell.verdict.origin)};
    try {
      write_script_file(folder / "origin" / "repro.py", origin_script(repro, *exported.origin));
    } catch (const std::invalid_argument& error) {
      exported.origin.reset();
      exported.origin_error = error.what();
    }
  }
  if (exported.origin || exported.origin_error.empty()) exported.origin_error = answer.value("origin_error", "");
  if (!cell.verdict.origin) exported.origin_error = "the report names no origin for this cell";
  write_file_atomically((folder / "README.md").string(), model_readme(repro, report, exported));
}

class ModelKind : public CellKind {
 public:
  const char* name() const override { return "model"; }
  bool claims(const Cell& cell) const override { return cell.model.has_value(); }
  std::string grammar_problem(const Cell& cell) const override {
    const auto& name = cell.model->name;
    if (name.empty() || name.size() > kMaxNameLength || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        }))
      return fmt::format("model name {} is not a name", shown(name));
    return "";
  }
  // Every run is kept: the outputs that differ, and the origin op, are measured over all of them.
  bool stops_at_first_difference() const override { return false; }
  bool has_timing_runs() const override { return false; }
  // With per-op records, the runs that digest every op are followed by runs that do not, timed
  // apart: the model's own time, and what the per-op digests cost.
  int extra_runs(const Cell& cell, int repeats) const override {
    return cell.model->per_op ? std::max(1, (repeats + 1) / 2) : 0;
  }
  void judge(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict) const override {
    judge_model(cell, observations, verdict);
  }
  Documented documented(const Cell&, const ProbeInfo*) const override { return Documented::unknown; }
  std::vector<std::string> detail_lines(const Verdict& verdict) const override { return model_details(verdict); }
  void add_to_baseline(const CellReport& cell, Baseline& baseline) const override {
    const auto& model = *cell.cell.model;
    if (std::none_of(baseline.models.begin(), baseline.models.end(),
                     [&](const ModelSpec& seen) { return seen.name == model.name; }))
      baseline.models.push_back(model);
  }
  std::string repro_skip_reason(const CellReport&, const ProbeInfo*) const override { return ""; }
  void write_repro(const Report& report, ReproCell& repro, const nlohmann::json& answer,
                   const std::filesystem::path& folder) const override {
    write_model_cell(report, repro, answer, folder);
  }
  std::int64_t repro_origin_start(const CellReport& cell) const override { return origin_start(cell); }
};

}  // namespace

const CellKind& model_kind() {
  static const ModelKind kind;
  return kind;
}

}  // namespace repro_audit
