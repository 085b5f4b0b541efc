#pragma once
// `repro-audit repro`: writes, per cell of a report, a folder with repro.py, inputs.pt and README.md
// (repro/python_script.h). The inputs are made by `repro-audit export-inputs` processes started with
// each cell's process settings, as the audit's workers were.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/catalogue.h"
#include "report/report.h"
#include "repro/python_script.h"
#include "supervisor/worker_launcher.h"

namespace repro_audit {

// In every cell folder an export writes (it holds the cell's key): a later export replaces only a folder
// that has it, never a file or folder of the user's that happens to have a cell folder's name.
inline constexpr const char* kExportMark = ".repro-audit-cell";

struct ExportedCell {
  std::string key;
  std::string folder;   // where its files are; "" when nothing was written
  std::string skipped;  // why nothing was written
  std::string warning;  // written, with a caveat (e.g. the inputs made here differ from the audit's)
};

// What a py cell's repro.py runs, said before anyone runs it: the callable's file (or module and the
// folder it is imported from), as the report names it, and the interpreter. For the command's output
// and the cell's README.
std::string py_code_note(const ModelSpec& model);

// Writes into a staging folder inside `output_folder`, then moves every cell's folder into place at
// once; when `stopped` turns true the export ends and nothing is left behind (each cell says so).
std::vector<ExportedCell> export_repros(const Report& report, const std::vector<const CellReport*>& cells,
                                        const Catalogue& catalogue, const std::string& output_folder,
                                        WorkerLauncher& launcher, const std::function<bool()>& stopped = {});

// For the kinds' own files (kind/cell_kind.h): a script written atomically and made executable, and
// the inputs an export-inputs worker described ({"name", "dtype", "sizes"} each).
void write_script_file(const std::filesystem::path& path, const std::string& text);
std::vector<ReproInput> repro_inputs_of(const nlohmann::json& described);

}  // namespace repro_audit
