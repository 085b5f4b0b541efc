#include "repro/export.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdlib.h>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/json_number.h"
#include "common/user_error.h"
#include "config/config_json.h"
#include "hash/digest.h"
#include "kind/cell_kind.h"
#include "protocol/worker_protocol.h"
#include "repro/python_script.h"
#include "supervisor/supervisor.h"
#include "verdict/origin.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// Making inputs is quick; a probe whose prepare hangs must not hang the export.
constexpr auto kExportTimeLimit = std::chrono::seconds(300);

struct Pending {
  const CellReport* cell;
  ExportedCell* result;
};

std::string skip_reason(const CellReport& cell, const ProbeInfo* probe) {
  if (cell.verdict.kind == VerdictKind::unsupported)
    return "not run on " + cell.cell.device + ": " + cell.verdict.message;
  return kind_of(cell.cell).repro_skip_reason(cell, probe);
}

std::string report_input_digest(const CellReport& cell) {
  for (const auto& observation : cell.observations)
    if (!observation.input_digest.empty()) return observation.input_digest;
  return "";
}

void write_cell(const Report& report, const Pending& pending, const ProbeInfo* probe, const nlohmann::json& answer) {
  ReproCell repro;
  repro.cell = pending.cell;
  repro.probe = probe;
  repro.variant = probe ? probe->find_variant(pending.cell->cell.variant) : nullptr;
  repro.input_digest = answer.value("input_digest", "");
  // A report's config and environment were checked when loaded (report/json_io.h); a field of another
  // type than this version writes is read as absent.
  repro.warmup = report.config.is_object() ? json_integer_or(report.config, "warmup", 1) : 1;
  const auto torch = report.environment.is_object() ? report.environment.find("torch") : report.environment.end();
  repro.torch_version = torch != report.environment.end() && torch->is_string() ? torch->get<std::string>() : "";
  repro.inputs = repro_inputs_of(answer.at("inputs"));
  kind_of(pending.cell->cell).write_repro(report, repro, answer, fs::path(pending.result->folder));
  write_file_atomically((fs::path(pending.result->folder) / kExportMark).string(), pending.cell->cell.key + "\n");
  const auto audited = report_input_digest(*pending.cell);
  if (!audited.empty() && audited != repro.input_digest)
    pending.result->warning = fmt::format(
        "the inputs made here (digest {}) differ from the audit's ({}): {}; the script uses the inputs made here",
        repro.input_digest, audited,
        input_scheme_of(report) == InputScheme::aten
            ? "the audit made them with ATen's generator, whose kernels differ between CPU capabilities and torch "
              "versions"
            : "a probe or model that makes them otherwise in this build");
}

// One export-inputs process for cells that share process settings.
void export_group(const Report& report, const Catalogue& catalogue, const FlagSet& process_settings,
                  const std::vector<Pending>& group, WorkerLauncher& launcher, const std::function<bool()>& stopped) {
  WorkerRequest request;
  request.device = "cpu";
  request.process_settings = process_settings;
  request.input_scheme = input_scheme_of(report);  // the audit's inputs, made as it made them
  nlohmann::json directories = nlohmann::json::array(), origins = nlohmann::json::array();
  for (const auto& pending : group) {
    request.cells.push_back(pending.cell->cell);
    directories.push_back(pending.result->folder);
    origins.push_back(kind_of(pending.cell->cell).repro_origin_start(*pending.cell));
  }
  const nlohmann::json message = {
      {"request", request_to_json(request)}, {"directories", directories}, {"origins", origins}};
  auto process = launcher.start(message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                worker_environment(process_settings));
  std::map<std::string, nlohmann::json> answers;
  const auto deadline = std::chrono::steady_clock::now() + kExportTimeLimit;
  std::string line;
  while (true) {
    // Short waits, so an interruption is seen within a fraction of a second.
    const auto status =
        process->read_line(line, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(200)));
    if (status == Worker::ReadStatus::deadline) {
      if (std::chrono::steady_clock::now() < deadline && !(stopped && stopped())) continue;
      process->terminate(std::chrono::seconds(3));
      break;
    }
    if (status == Worker::ReadStatus::end_of_output) break;
    try {
      auto answer = nlohmann::json::parse(line);
      const auto key = answer.at("key").get<std::string>();
      answers[key] = std::move(answer);
    } catch (const nlohmann::json::exception&) {
      // a library printing to stdout: not an answer
    }
  }
  const auto ended = process->wait();
  // A file that could not be written ends the export, whichever cell it was for: the disk, not the cell.
  for (const auto& [key, answer] : answers)
    if (answer.contains("write_error") && answer.at("write_error").is_string())
      throw UserError(
          fmt::format("cannot write the inputs of {}: {}", key, answer.at("write_error").get<std::string>()));
  for (const auto& pending : group) {
    const auto it = answers.find(pending.cell->cell.key);
    std::string error;
    if (it == answers.end())
      error =
          fmt::format("the process making the inputs ended ({}) before this cell: {}", ended, process->log_tail(400));
    else if (it->second.contains("error"))
      error = "making its inputs failed: " + it->second.at("error").get<std::string>();
    if (error.empty()) {
      try {
        write_cell(report, pending, find_probe(catalogue, pending.cell->cell.probe), it->second);
        continue;
      } catch (const std::invalid_argument& failure) {  // a report field the script cannot carry as data
        error = std::string("its files cannot be written: ") + failure.what();
      } catch (const nlohmann::json::exception& failure) {  // an answer of another shape
        error = std::string("its files cannot be written: ") + failure.what();
      }
      // Anything else (a write that failed: UserError, filesystem_error) ends the export with exit 2.
    }
    pending.result->skipped = error;
    std::error_code ignored;
    fs::remove_all(pending.result->folder, ignored);
    pending.result->folder.clear();
  }
}

// A folder name per cell, unique within the export: a second key that sanitises to a taken name gets
// its key's digest appended (and a warning), so no cell's files replace another's.
std::string unique_folder_name(const std::string& key, std::set<std::string>& taken, std::string& warning) {
  auto name = folder_name_of(key);
  if (taken.insert(name).second) return name;
  const auto first = name;
  name = fmt::format("{}-{}", first, digest_text(key).substr(0, 12));
  warning = fmt::format("its folder name {} is also another cell's: written to {}", first, name);
  taken.insert(name);
  return name;
}

// A cell folder an earlier export wrote: a real folder (not a link) holding the mark.
bool written_by_export(const fs::path& folder) {
  std::error_code error;
  return fs::symlink_status(folder, error).type() == fs::file_type::directory &&
         fs::symlink_status(folder / kExportMark, error).type() == fs::file_type::regular;
}

// Whatever has a cell folder's name in `output` but was not written by an export (a file, a link, a
// folder of the user's) is never replaced: the export stops before it makes or moves anything.
void refuse_foreign_targets(const std::vector<ExportedCell>& results, const fs::path& output) {
  for (const auto& result : results) {
    if (result.folder.empty()) continue;
    const auto target = output / fs::path(result.folder).filename();
    std::error_code error;
    if (fs::exists(fs::symlink_status(target, error)) && !written_by_export(target))
      throw UserError(
          fmt::format("{}: exists and is not a folder this command wrote (no {} in it): move it away, "
                      "or export into another folder",
                      target.string(), kExportMark));
  }
}

// Moves every written folder from the staging folder into `output`, replacing an earlier export of
// the same cell; held signals wait until all are in place, so the export is all there or absent.
void commit(std::vector<ExportedCell>& results, const fs::path& staging, const fs::path& output) {
  refuse_foreign_targets(results, output);  // again: the folder may have changed while the inputs were made
  const DeferredSignals held;
  for (auto& result : results) {
    if (result.folder.empty()) continue;
    const auto name = fs::path(result.folder).filename();
    const auto target = output / name;
    if (fs::exists(fs::symlink_status(target))) fs::rename(target, staging / (".replaced-" + name.string()));
    fs::rename(result.folder, target);
    result.folder = target.string();
  }
}

}  // namespace

std::vector<ReproInput> repro_inputs_of(const nlohmann::json& described) {
  std::vector<ReproInput> inputs;
  for (const auto& input : described)
    inputs.push_back({input.at("name"), input.at("dtype"), input.at("sizes").get<std::vector<std::int64_t>>()});
  return inputs;
}

void write_script_file(const std::filesystem::path& path, const std::string& text) {
  write_file_atomically(path.string(), text);
  ::chmod(path.c_str(), 0755);
}

std::string py_code_note(const ModelSpec& model) {
  const auto module = model.callable.substr(0, model.callable.rfind(':'));
  const auto name = model.callable.substr(model.callable.rfind(':') + 1);
  const auto code = model.path.empty() ? fmt::format("the module {} found from {}", module, model.search_path)
                                       : fmt::format("the file {}", model.path);
  return fmt::format(
      "repro.py runs code the report names: its runner imports {} and calls {}, in the Python you run repro.py with "
      "(the audit's was {}); read that code before you run it",
      code, name, model.python);
}

std::vector<ExportedCell> export_repros(const Report& report, const std::vector<const CellReport*>& cells,
                                        const Catalogue& catalogue, const std::string& output_folder,
                                        WorkerLauncher& launcher, const std::function<bool()>& stopped) {
  std::vector<ExportedCell> results(cells.size());
  std::map<FlagSet, std::vector<Pending>> groups;
  // Every file is written in a staging folder inside the output folder first (one filesystem, so the
  // folders can be renamed into place), which is removed on every path out of here.
  fs::create_directories(output_folder);
  auto pattern = (fs::path(output_folder) / ".repro-audit-export-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw UserError(fmt::format("{}: cannot make a folder in it: {}", output_folder, std::strerror(errno)));
  const fs::path staging = pattern;
  const auto remove_staging = [&] {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
  };
  std::set<std::string> taken;
  // A report keeps its models' specs in its config; a model cell gets its own back.
  const auto models =
      report.config.is_object() ? report.config.value("models", std::vector<ModelSpec>{}) : std::vector<ModelSpec>{};
  std::deque<CellReport> with_model;
  try {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (is_model_probe(cells[i]->cell.probe) && !cells[i]->cell.model)
        for (const auto& model : models)
          if (model_probe_name(model) == cells[i]->cell.probe) {
            with_model.push_back(*cells[i]);
            with_model.back().cell.model = model;
          }
      const auto& cell =
          with_model.empty() || with_model.back().cell.key != cells[i]->cell.key ? *cells[i] : with_model.back();
      results[i].key = cell.cell.key;
      results[i].skipped = skip_reason(cell, find_probe(catalogue, cell.cell.probe));
      if (!results[i].skipped.empty()) continue;
      results[i].folder = (staging / unique_folder_name(cell.cell.key, taken, results[i].warning)).string();
      if (cell.cell.model && is_python_model(*cell.cell.model))
        results[i].warning += (results[i].warning.empty() ? "" : "; ") + py_code_note(*cell.cell.model);
      fs::create_directories(results[i].folder);
      groups[process_settings(cell.cell.settings)].push_back({&cell, &results[i]});
    }
    refuse_foreign_targets(results, output_folder);
    for (const auto& [settings, group] : groups) {
      if (stopped && stopped()) break;
      export_group(report, catalogue, settings, group, launcher, stopped);
    }
    if (stopped && stopped()) {
      for (auto& result : results)
        if (!result.folder.empty()) {
          result.folder.clear();
          result.skipped = "interrupted before its files were in place";
        }
    } else {
      commit(results, staging, output_folder);
    }
  } catch (...) {
    remove_staging();
    throw;
  }
  remove_staging();
  return results;
}

}  // namespace repro_audit
