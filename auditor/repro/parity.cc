#include "repro/parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "config/atomic_file.h"
#include "repro/export.h"
#include "repro/path_checks.h"
#include "supervisor/worker_process.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

constexpr auto kScriptTimeLimit = std::chrono::seconds(600);

// Runs `argv` to its end; its last stdout line, or "" (then `failure` says why).
std::string last_line_of(const std::vector<std::string>& argv, const std::string& input, const std::string& temporary,
                         std::string& failure) try {
  WorkerProcess process(argv, {}, input, temporary);
  const auto deadline = std::chrono::steady_clock::now() + kScriptTimeLimit;
  std::string line, last;
  while (true) {
    const auto status = process.read_line(line, deadline);
    if (status == Worker::ReadStatus::line) {
      if (!line.empty()) last = line;
      continue;
    }
    if (status == Worker::ReadStatus::deadline) process.terminate(std::chrono::seconds(3));
    break;
  }
  const auto ended = process.wait();
  if (last.empty()) failure = fmt::format("{} printed nothing ({}): {}", argv[1], ended, process.log_tail(600));
  return last;
} catch (const std::exception& error) {  // in a runner thread: a failure of this script, never an abort
  failure = fmt::format("{} did not run: {}", argv[1], error.what());
  return "";
}

std::vector<std::pair<std::string, std::string>> first_run_outputs(const CellReport& cell) {
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.outputs.empty()) return run.outputs;
  return {};
}

}  // namespace

int ParityResult::failures() const {
  const auto cells_failed =
      std::count_if(cells.begin(), cells.end(), [](const ParityCell& c) { return c.status == "mismatch"; });
  const auto paths_failed = std::count_if(paths.begin(), paths.end(), [](const ParityPath& p) { return !p.holds; });
  return static_cast<int>(cells_failed + paths_failed);
}

ParityCell compare_with_script(const CellReport& cell, const ProbeInfo& probe, const std::string& script_output) {
  ParityCell result{cell.cell.key, probe.name, "mismatch", ""};
  nlohmann::json script;
  try {
    script = nlohmann::json::parse(script_output);
  } catch (const nlohmann::json::exception&) {
    result.detail = "repro.py printed no JSON: " + script_output.substr(0, 300);
    return result;
  }
  const auto python_verdict = script.value("verdict", "");
  const auto cpp_verdict = to_string(cell.verdict.kind);
  const bool verdicts_agree = python_verdict == cpp_verdict;
  const auto expected = first_run_outputs(cell);
  const auto python_outputs = script.value("outputs", nlohmann::json::object());
  // The first output whose digest differs, in the probe's order.
  std::string first_difference;
  for (const auto& [name, digest] : expected) {
    const auto found = python_outputs.find(name);
    if (found == python_outputs.end()) {
      first_difference = fmt::format("output '{}' is missing from the Python run", name);
      break;
    }
    if (found->get<std::string>() != digest) {
      first_difference = fmt::format("output '{}': Python {} vs C++ {}", name, found->get<std::string>(), digest);
      break;
    }
  }
  if (first_difference.empty() && python_outputs.size() != expected.size())
    first_difference = fmt::format("Python gave {} outputs, C++ {}", python_outputs.size(), expected.size());
  const bool digests_compared = !expected.empty() && cell.verdict.kind != VerdictKind::nondeterministic &&
                                script.value("digests_comparable", false);
  if (!probe.python.differs_reason.empty()) {
    if (!verdicts_agree) {
      result.detail =
          fmt::format("verdict: Python {} ({}), C++ {}", python_verdict, script.value("detail", ""), cpp_verdict);
    } else if (digests_compared && first_difference.empty()) {
      result.detail = "declared as differing from its Python twin (" + probe.python.differs_reason +
                      "), yet every digest is equal: the declaration is stale";
    } else {
      result.status = "verdict";
      result.detail = python_verdict;
    }
    return result;
  }
  if (!verdicts_agree) {
    result.detail = fmt::format("verdict: Python {} ({}), C++ {}{}", python_verdict, script.value("detail", ""),
                                cpp_verdict, first_difference.empty() ? "" : "; first difference: " + first_difference);
    return result;
  }
  if (!digests_compared) {
    result.status = "verdict";
    result.detail = python_verdict + " (digests not comparable here)";
    return result;
  }
  if (!first_difference.empty()) {
    result.detail = first_difference;
    return result;
  }
  result.status = "equal";
  result.detail = python_verdict;
  return result;
}

ParityResult run_parity(const Report& report, const Catalogue& catalogue, const ParityOptions& options) {
  ParityResult result;
  std::vector<const CellReport*> cells;
  for (const auto& cell : report.cells) cells.push_back(&cell);
  ProcessLauncher launcher(options.executable, options.temporary_folder, "export-inputs");
  const auto exported = export_repros(report, cells, catalogue, options.folder, launcher);
  // Each script runs one process on one thread (the cells' setting): as many at once as there are cores.
  std::vector<std::string> outputs(exported.size()), failures(exported.size());
  std::atomic<std::size_t> next{0};
  const auto run_scripts = [&] {
    for (auto i = next++; i < exported.size(); i = next++)
      if (!exported[i].folder.empty())
        outputs[i] = last_line_of({options.python, (fs::path(exported[i].folder) / "repro.py").string(), "--json",
                                   "--runs", std::to_string(options.runs), "--processes", "1"},
                                  "", options.temporary_folder, failures[i]);
  };
  std::vector<std::thread> runners;
  for (unsigned k = 0; k < std::max(1u, std::min(options.jobs, 64u)); ++k) runners.emplace_back(run_scripts);
  for (auto& runner : runners) runner.join();
  for (std::size_t i = 0; i < exported.size(); ++i) {
    const auto& cell = *cells[i];
    const auto* probe = find_probe(catalogue, cell.cell.probe);
    if (exported[i].folder.empty()) {
      result.cells.push_back({cell.cell.key, cell.cell.probe, "skipped", exported[i].skipped});
      continue;
    }
    const auto& output = outputs[i];
    const auto& failure = failures[i];
    if (output.empty()) {
      result.cells.push_back({cell.cell.key, cell.cell.probe, "mismatch", failure});
      continue;
    }
    result.cells.push_back(compare_with_script(cell, *probe, output));
    if (result.python_torch.empty())
      result.python_torch = nlohmann::json::parse(output, nullptr, false).value("torch", "");
  }
  // The declared paths, checked by the same Python.
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& probe : catalogue)
    for (const auto& path : probe.python.paths)
      checks.push_back({{"probe", probe.name}, {"note", path.note}, {"check", path.check}});
  if (checks.empty()) return result;
  const auto checker = (fs::path(options.folder) / "path_checks.py").string();
  write_file_atomically(checker, kPathChecker);
  std::string failure;
  const auto output = last_line_of({options.python, checker},
                                   checks.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                                   options.temporary_folder, failure);
  const auto answers = nlohmann::json::parse(output, nullptr, false);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    ParityPath path{checks[i]["probe"], checks[i]["note"], false, failure};
    if (answers.is_array() && i < answers.size()) {
      path.holds = answers[i].value("holds", false);
      path.detail = answers[i].value("detail", "");
    }
    result.paths.push_back(std::move(path));
  }
  return result;
}

std::string parity_text(const ParityResult& result) {
  std::string text = fmt::format("{:<58} {:<9} {}\n", "cell", "parity", "detail");
  for (const auto& cell : result.cells)
    text +=
        fmt::format("{:<58} {:<9} {}\n", cell.key, cell.status == "mismatch" ? "MISMATCH" : cell.status, cell.detail);
  for (const auto& path : result.paths)
    text += fmt::format("{:<58} {:<9} {}{}\n", "path of " + path.probe, path.holds ? "holds" : "STALE", path.note,
                        path.detail.empty() ? "" : " (" + path.detail + ")");
  return text;
}

}  // namespace repro_audit
