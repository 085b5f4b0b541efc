// `repro REPORT CELL_PATTERN... -o DIR`: a standalone Python reproduction of each matching cell.
#include <fnmatch.h>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "audit/audit.h"
#include "cli/commands.h"
#include "cli/interruption.h"
#include "cli/terminal.h"
#include "cli/torch_side.h"
#include "common/user_error.h"
#include "config/models_named_by_user.h"
#include "probe/probe_catalogue.h"
#include "report/cell_printer.h"
#include "report/escape.h"
#include "report/json_io.h"
#include "repro/export.h"
#include "supervisor/process_launcher.h"

namespace repro_audit {
namespace {

// A pattern with * ? or [ is a shell pattern over the whole key; otherwise as `show`: the key, or
// every key that contains it.
std::vector<const CellReport*> matching(const Report& report, const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return match_cells(report, pattern);
  std::vector<const CellReport*> found;
  for (const auto& cell : report.cells)
    if (::fnmatch(pattern.c_str(), cell.cell.key.c_str(), 0) == 0) found.push_back(&cell);
  return found;
}

// The model files the chosen cells load (the origin op is captured by running the model) are the ones
// `files` names, never the report's: each cell's model, and the report's list, replaced by the named.
void use_named_model_files(Report& report, const std::vector<const CellReport*>& cells,
                           const std::vector<std::string>& files, const std::vector<std::string>& inputs,
                           const std::string& source) {
  auto models =
      report.config.is_object() ? report.config.value("models", std::vector<ModelSpec>{}) : std::vector<ModelSpec>{};
  std::vector<std::string> keys;
  for (const auto* cell : cells) {
    keys.push_back(cell->cell.key);
    const auto& own = cell->cell.model;
    if (own && std::none_of(models.begin(), models.end(), [&](const ModelSpec& m) { return m.name == own->name; }))
      models.push_back(*own);
  }
  models = models_named_by_user(
      models, keys, source, {.command = "repro", .runs_python = false, .model_files = files, .input_files = inputs});
  for (auto& cell : report.cells)
    for (const auto& model : models)
      if (model_probe_name(model) == cell.cell.probe) cell.cell.model = model;
  if (report.config.is_object()) report.config["models"] = models;
}

}  // namespace

Command add_repro_command(CLI::App& app) {
  auto* repro = app.add_subcommand(
      "repro", "Write a standalone Python script (with its inputs and a README) that reproduces each matching cell");
  auto report_path = std::make_shared<std::string>();
  auto patterns = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto model_files = std::make_shared<std::vector<std::string>>();
  auto input_files = std::make_shared<std::vector<std::string>>();
  repro->add_option("report", *report_path, "A report written by `run --json` or `model --json`")->required();
  repro->add_option("cells", *patterns, "Cell keys, parts of keys, or shell patterns such as 'index_add/*'")
      ->required();
  repro->add_option("-o,--output", *output, "The folder to write into, one subfolder per cell")->required();
  repro->add_option("--model", *model_files,
                    "The model file (TorchScript or AOTInductor package) of a model cell, matched to the report's by "
                    "file name or model name; the file a report names is never loaded (repeatable)");
  repro->add_option("--inputs", *input_files,
                    "The inputs file (torch.save) of a model cell whose report names one, matched to the report's by "
                    "file name; the file a report names is never read (repeatable)");
  return {repro,
          [report_path, patterns, output, model_files, input_files] {
            auto report = load_report_file(*report_path);
            std::vector<const CellReport*> cells;
            for (const auto& pattern : *patterns) {
              const auto found = matching(report, pattern);
              if (found.empty()) throw UserError(*report_path + ": no cell key matches '" + pattern + "'");
              for (const auto* cell : found)
                if (std::find(cells.begin(), cells.end(), cell) == cells.end()) cells.push_back(cell);
            }
            use_named_model_files(report, cells, *model_files, *input_files, *report_path);
            // Inputs are made on the CPU: by repro-audit-cpu where it sits beside repro-audit-torch, unless a
            // TorchScript or AOTInductor model needs the whole of libtorch (audit/audit.h).
            std::vector<Cell> cells_of_inputs;
            for (const auto* cell : cells) cells_of_inputs.push_back(cell->cell);
            ProcessLauncher launcher(worker_executable("cpu", cells_of_inputs, torch_program()), temporary_folder(),
                                     "export-inputs");
            install_stop_handlers();
            const auto exported =
                export_repros(report, cells, registered_catalogue(), *output, launcher, stop_requested);
            if (stop_requested()) {
              print_message(fmt::format("interrupted: nothing was written to {}", *output));
              return 130;
            }
            int written = 0;
            for (const auto& cell : exported) {
              if (cell.folder.empty()) {
                std::cout << fmt::format("skipped  {}: {}\n", cell.key, terminal_text(cell.skipped));
                continue;
              }
              ++written;
              std::cout << fmt::format("wrote    {}/repro.py\n", cell.folder);
              if (!cell.warning.empty())
                print_message(fmt::format("warning: {}: {}", cell.key, terminal_text(cell.warning)));
            }
            std::cout << fmt::format("{} of {} cell(s) exported to {}; run one with `python {}/repro.py`\n", written,
                                     exported.size(), *output,
                                     written > 0 ? std::find_if(exported.begin(), exported.end(),
                                                                [](const ExportedCell& c) { return !c.folder.empty(); })
                                                       ->folder
                                                 : std::string("<cell>"));
            return written > 0 ? 0 : 1;
          },
          [] { return false; }};  // the catalogue is built in; the inputs come from repro-audit-torch
}

}  // namespace repro_audit
