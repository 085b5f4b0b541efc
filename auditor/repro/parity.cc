#include "repro/parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/atomic_file.h"
#include "config/documentation.h"
#include "repro/export.h"
#include "repro/path_checks.h"
#include "repro/python_check.h"
#include "repro/script_host.h"
#include "supervisor/process_launcher.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

// Runs `argv` to its end, the scripts' time limit at most. Never throws: it runs in a runner thread, where an
// exception would end the process (std::terminate) and leave the scripts' folder behind.
ScriptRun run_script(const std::vector<std::string>& argv, const std::string& input, const ParityOptions& options) try {
  ScriptRun run;
  WorkerProcess process(argv, {}, input, options.temporary_folder);
  const auto deadline = std::chrono::steady_clock::now() + options.script_time_limit;
  std::string line;
  while (true) {
    // Read a second at a time, so that a stop asked for is heeded within a second.
    const auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    const auto status = process.read_line(line, slice);
    if (status == Worker::ReadStatus::line) {
      if (!line.empty()) run.last_line = line;
      continue;
    }
    if (status == Worker::ReadStatus::end_of_output) break;
    run.stopped = options.stop_requested && options.stop_requested();
    run.timed_out = std::chrono::steady_clock::now() >= deadline;
    if (!run.stopped && !run.timed_out) continue;
    process.terminate(std::chrono::seconds(3));
    break;
  }
  const auto ended = process.wait();
  if (run.timed_out)
    run.failure =
        fmt::format("{} did not answer within {} s; it was stopped", argv[1], options.script_time_limit.count());
  else if (run.stopped)
    run.failure = fmt::format("{} was stopped: a stop was asked for", argv[1]);
  else if (run.last_line.empty())
    run.failure = fmt::format("{} printed nothing ({}): {}", argv[1], ended, process.log_tail(600));
  if (!run.failure.empty()) run.last_line.clear();
  return run;
} catch (const std::exception& error) {
  return {"", fmt::format("{} did not run: {}", argv[1], error.what())};
}

// Runs every exported script, in up to `options.jobs` Pythons at once, one per 8 scripts (each imports
// torch and Inductor, 4-5 s of CPU on a slow host, and forks a child per script: repro/script_host.h). The
// first script that does not answer within the limit stops the run: the scripts not yet started are not
// run, each naming it. A hang is nearly always the interpreter or its torch (a lock, a terminal), so each
// further script would hang too, and a shorter limit for the rest would still cost a hundred of them.
std::vector<ScriptRun> run_scripts(const std::vector<ExportedCell>& exported,
                                   const std::vector<const CellReport*>& cells, const ParityOptions& options,
                                   std::string& hung) {
  std::vector<ScriptRun> runs(exported.size());
  std::mutex hung_lock;
  const auto not_run_reason = [&]() -> std::string {
    if (options.stop_requested && options.stop_requested()) return "not run: a stop was asked for";
    const std::lock_guard hold(hung_lock);
    return hung.empty() ? ""
                        : fmt::format("not run: the script of {} did not answer within {} s", hung,
                                      options.script_time_limit.count());
  };
  std::vector<std::size_t> scripts;  // the cells that have one
  for (std::size_t i = 0; i < exported.size(); ++i)
    if (!exported[i].folder.empty()) scripts.push_back(i);
  const auto hosts = std::clamp(std::min(static_cast<unsigned>(scripts.size()) / 8, options.jobs), 1u, 64u);
  std::vector<std::vector<std::size_t>> dealt(hosts);
  for (std::size_t k = 0; k < scripts.size(); ++k) dealt[k % hosts].push_back(scripts[k]);
  const auto runner = [&](unsigned host) {
    const auto& mine = dealt[host];
    if (mine.empty()) return;
    try {
      if (const auto reason = not_run_reason(); !reason.empty()) {
        for (const auto i : mine) runs[i] = {"", reason, false, true};
        return;
      }
      std::vector<std::vector<std::string>> scripts;
      for (const auto i : mine)
        scripts.push_back(
            {(fs::path(exported[i].folder) / "repro.py").string(), "--json", "--runs",
             std::to_string(cells[i]->cell.invariance == Invariance::none ? options.runs : options.invariance_runs),
             "--processes", "1"});
      ScriptHostOptions host_options{options.python,
                                     (fs::path(options.folder) / fmt::format("script_host_{}.py", host)).string(),
                                     options.temporary_folder,
                                     options.script_time_limit,
                                     options.stop_requested,
                                     not_run_reason,
                                     [&](std::size_t k) {
                                       const std::lock_guard hold(hung_lock);
                                       if (hung.empty()) hung = cells[mine[k]]->cell.key;
                                     }};
      const auto ended = run_in_host(scripts, host_options);
      for (std::size_t k = 0; k < mine.size(); ++k) runs[mine[k]] = ended[k];
    } catch (...) {  // a thread must not throw: std::terminate, and the scripts' folder left behind
      for (const auto i : mine) runs[i] = {"", "the script could not be run (an exception in its runner)"};
    }
  };
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < hosts; ++k) threads.emplace_back(runner, k);
  for (auto& thread : threads) thread.join();
  return runs;
}

std::vector<std::pair<std::string, std::string>> first_run_outputs(const CellReport& cell) {
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.outputs.empty()) return run.outputs;
  return {};
}

// The declared Python paths of `report`'s probes, checked by the same Python; not after a hang or stop.
void check_paths(const Report& report, const Catalogue& catalogue, const ParityOptions& options,
                 const std::string& hung, ParityResult& result) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& probe : catalogue) {
    if (std::none_of(report.cells.begin(), report.cells.end(),
                     [&](const CellReport& cell) { return cell.cell.probe == probe.name; }))
      continue;
    for (const auto& path : probe.python.paths)
      checks.push_back({{"probe", probe.name}, {"note", path.note}, {"check", path.check}});
  }
  if (checks.empty()) return;
  std::string not_run;
  if (!result.complete) not_run = "not run: a stop was asked for";
  if (!hung.empty()) not_run = fmt::format("not run: the script of {} did not answer", hung);
  ScriptRun run;
  if (not_run.empty()) {
    const auto checker = (fs::path(options.folder) / "path_checks.py").string();
    write_file_atomically(checker, kPathChecker);
    run = run_script({options.python, checker},
                     checks.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", options);
  }
  const auto answers = nlohmann::json::parse(run.last_line, nullptr, false);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    ParityPath path{checks[i]["probe"], checks[i]["note"], false, not_run.empty(),
                    not_run.empty() ? run.failure : not_run};
    if (answers.is_array() && i < answers.size()) {
      path.holds = answers[i].value("holds", false);
      path.detail = answers[i].value("detail", "");
    }
    if (path.checked && !path.holds && !result.python_torch.empty() &&
        compare_torch_versions(result.python_torch, kPythonPathsCheckedWith) < 0) {
      path.applies = false;
      path.detail =
          fmt::format("not in torch {}: the note describes torch {}", result.python_torch, kPythonPathsCheckedWith);
    }
    result.paths.push_back(std::move(path));
  }
}

}  // namespace

int ParityResult::failures() const {
  const auto cells_failed =
      std::count_if(cells.begin(), cells.end(), [](const ParityCell& c) { return c.status == "mismatch"; });
  const auto paths_failed =
      std::count_if(paths.begin(), paths.end(), [](const ParityPath& p) { return p.checked && p.applies && !p.holds; });
  return static_cast<int>(cells_failed + paths_failed);
}

int ParityResult::not_run() const {
  const auto cells_not_run =
      std::count_if(cells.begin(), cells.end(), [](const ParityCell& c) { return c.status == "not run"; });
  const auto paths_not_run = std::count_if(paths.begin(), paths.end(), [](const ParityPath& p) { return !p.checked; });
  return static_cast<int>(cells_not_run + paths_not_run);
}

ParityCell compare_with_script(const CellReport& cell, const ProbeInfo& probe, const std::string& script_output) {
  ParityCell result{cell.cell.key, probe.name, "mismatch", ""};
  if (!probe.python.cuda_differs_reason.empty() && cell.cell.device.starts_with("cuda")) {
    result.status = "skipped";
    result.detail = "on CUDA its twin cannot give its bits or its verdict: " + probe.python.cuda_differs_reason;
    return result;
  }
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
  const auto exported = export_repros(report, cells, catalogue, options.folder, launcher, options.stop_requested);
  std::string hung;  // the key of the first script that did not answer in time
  auto runs = run_scripts(exported, cells, options, hung);
  if (!hung.empty()) {
    // Was it the interpreter or that script's op? Asked again as at the start; torch's files are in the
    // page cache by now, so a minute (or the scripts' limit, if shorter) is ample.
    const auto again = check_python(options.python, options.temporary_folder,
                                    std::min(std::chrono::seconds(60), options.script_time_limit));
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (cells[i]->cell.key == hung)
        runs[i].failure += again.problem.empty()
                               ? "; the interpreter still imports torch at once, so this script's op hangs"
                               : "; asked again: " + again.problem;
  }
  result.complete = !(options.stop_requested && options.stop_requested());
  for (std::size_t i = 0; i < exported.size(); ++i) {
    const auto& cell = *cells[i];
    const auto* probe = find_probe(catalogue, cell.cell.probe);
    if (exported[i].folder.empty()) {
      result.cells.push_back(
          {cell.cell.key, cell.cell.probe, result.complete ? "skipped" : "not run", exported[i].skipped});
      continue;
    }
    const auto& run = runs[i];
    if (run.last_line.empty()) {
      result.cells.push_back({cell.cell.key, cell.cell.probe, run.stopped ? "not run" : "mismatch", run.failure});
      continue;
    }
    result.cells.push_back(compare_with_script(cell, *probe, run.last_line));
    if (result.python_torch.empty())
      result.python_torch = nlohmann::json::parse(run.last_line, nullptr, false).value("torch", "");
  }
  // A race needs its threads to run at once, which on a busy machine they may not: a script that saw
  // one result where the C++ runs saw several is run again, at most twice and with 5 times the runs,
  // before that is a mismatch.
  auto race_options = options;
  race_options.runs = race_options.invariance_runs = std::max(options.runs * 5, 10);
  for (int attempt = 0; attempt < 2 && hung.empty() && result.complete; ++attempt) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < result.cells.size(); ++i)
      if (result.cells[i].status == "mismatch" && cells[i]->verdict.kind == VerdictKind::nondeterministic &&
          result.cells[i].detail.starts_with("verdict: Python deterministic"))
        again.push_back(i);
    if (again.empty()) break;
    std::vector<ExportedCell> exported_again;
    std::vector<const CellReport*> cells_again;
    for (const auto i : again) {
      exported_again.push_back(exported[i]);
      cells_again.push_back(cells[i]);
    }
    const auto reruns = run_scripts(exported_again, cells_again, race_options, hung);
    for (std::size_t k = 0; k < again.size(); ++k)
      if (!reruns[k].last_line.empty())
        result.cells[again[k]] = compare_with_script(
            *cells_again[k], *find_probe(catalogue, cells_again[k]->cell.probe), reruns[k].last_line);
  }
  check_paths(report, catalogue, options, hung, result);
  return result;
}

std::string parity_text(const ParityResult& result) {
  std::string text = fmt::format("{:<58} {:<9} {}\n", "cell", "parity", "detail");
  for (const auto& cell : result.cells)
    text +=
        fmt::format("{:<58} {:<9} {}\n", cell.key, cell.status == "mismatch" ? "MISMATCH" : cell.status, cell.detail);
  for (const auto& path : result.paths)
    text += fmt::format("{:<58} {:<9} {}{}\n", "path of " + path.probe,
                        !path.checked   ? "not run"
                        : path.holds    ? "holds"
                        : !path.applies ? "absent"
                                        : "STALE",
                        path.note, path.detail.empty() ? "" : " (" + path.detail + ")");
  return text;
}

}  // namespace repro_audit
