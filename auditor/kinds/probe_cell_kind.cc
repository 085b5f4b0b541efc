#include "kinds/probe_cell_kind.h"

#include "common/atomic_file.h"
#include "report/report.h"
#include "repro/export.h"
#include "repro/python_script.h"

namespace repro_audit {

Documented ProbeCellKind::documented(const Cell& cell, const ProbeInfo* probe) const {
  return probe ? probe->documented_on(cell.variant, device_kind(cell.device)) : Documented::deterministic;
}

std::string ProbeCellKind::repro_skip_reason(const CellReport& cell, const ProbeInfo* probe) const {
  if (!probe) return "this build has no probe '" + cell.cell.probe + "'";
  if (!probe->find_variant(cell.cell.variant)) return "this build's probe has no variant '" + cell.cell.variant + "'";
  if (probe->python.code.empty()) return "the probe has no Python form: " + probe->python.none_reason;
  return "";
}

void ProbeCellKind::write_repro(const Report& report, ReproCell& repro, const nlohmann::json&,
                                const std::filesystem::path& folder) const {
  write_script_file(folder / "repro.py", python_script(repro));
  write_file_atomically((folder / "README.md").string(), repro_readme(repro, report));
}

}  // namespace repro_audit
