#include "kinds/python_kind.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/atomic_file.h"
#include "kinds/model_kind.h"
#include "kinds/python_loader_verdict.h"
#include "kinds/python_randomness.h"
#include "plan/cell_grammar.h"
#include "report/escape.h"
#include "report/report.h"
#include "repro/export.h"
#include "repro/python_runner.h"
#include "repro/python_script.h"
#include "repro/python_text.h"

namespace repro_audit {
namespace {

// repro.py runs the shipped runner (runner.py beside it) in P processes of this Python, as the audit
// did, and compares the digests with the report's. Every value from the report is data (json.loads).
const char* const kReproMain = R"PY(

def run_process(process, runs):
    request = dict(REQUEST, process=process, repeats=runs)
    answer = subprocess.run([sys.executable, os.path.join(HERE, "runner.py")], input=json.dumps(request),
                            capture_output=True, text=True)
    for line in answer.stdout.splitlines():
        event = json.loads(line)
        if event.get("event") == "cell":
            return event["observation"]
    sys.exit(f"the runner ended ({answer.returncode}) without a result:\n{answer.stderr[-2000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--processes", type=int, default=PROCESSES)
    arguments = parser.parse_args()
    digests = []
    for process in range(arguments.processes):
        observation = run_process(process, arguments.runs)
        if observation["status"] != "ok":
            print(f"process {process}: {observation['status']}: {observation.get('message', '')}")
            continue
        seen = [run["digest"] for run in observation["runs"] if not run.get("warmup")]
        print(f"process {process}: {len(set(seen))} distinct digest(s) over {len(seen)} runs")
        digests += seen
    distinct = sorted(set(digests))
    verdict = "deterministic" if len(distinct) == 1 else "nondeterministic" if distinct else "error"
    print(f"verdict here: {verdict}; in the report: {EXPECTED['verdict']}")
    known = [d for d in distinct if d in EXPECTED["digests"]]
    print(f"{len(known)} of {len(distinct)} digest(s) seen here were seen by the audit")


if __name__ == "__main__":
    main()
)PY";

std::string py_script(const ReproCell& repro, const CellReport& cell) {
  // A compile cache named by a report is not used: Inductor loads compiled code from its cache.
  auto model = *cell.cell.model;
  model.compile_cache.clear();
  nlohmann::json request = {{"device", cell.cell.device},
                            {"warmup", repro.warmup},
                            {"timing", {{"min_samples", 0}, {"budget_seconds", 0}}},
                            {"cells", nlohmann::json::array({nlohmann::json{{"key", cell.cell.key},
                                                                            {"device", cell.cell.device},
                                                                            {"settings", cell.cell.settings},
                                                                            {"model", model}}})}};
  std::vector<std::string> digests;
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.digest.empty() && std::find(digests.begin(), digests.end(), run.digest) == digests.end())
        digests.push_back(run.digest);
  const nlohmann::json expected = {{"verdict", to_string(cell.verdict.kind)}, {"digests", digests}};
  std::string script = "#!/usr/bin/env python3\n";
  script += fmt::format("\"\"\"Reproduces {} with the callable {}.\n\n", docstring_text(cell.cell.key),
                        docstring_text(cell.cell.model->callable));
  script +=
      "runner.py (the runner repro-audit ran) imports the callable by its module path, applies the cell's\n"
      "settings and digests its outputs; this script runs it in several processes of this Python.\n"
      "Run: python repro.py [--runs N] [--processes P]\n\"\"\"\n";
  script += "import argparse\nimport json\nimport os\nimport subprocess\nimport sys\n\n";
  script += "HERE = os.path.dirname(os.path.abspath(__file__))\n";
  script += fmt::format("REQUEST = {}\n", parsed(request));
  script += fmt::format("EXPECTED = {}\n", parsed(expected));
  std::size_t runs = 1;
  for (const auto& observation : cell.observations)
    runs = std::max<std::size_t>(runs, std::count_if(observation.runs.begin(), observation.runs.end(),
                                                     [](const RunObservation& run) { return !run.warmup; }));
  script += fmt::format("RUNS = {}\nPROCESSES = {}\n", runs, std::max<std::size_t>(1, cell.observations.size()));
  return script + kReproMain;
}

class PythonKind : public CellKind {
 public:
  const char* name() const override { return "py"; }
  bool claims(const Cell& cell) const override { return cell.model && is_python_model(*cell.model); }
  std::string grammar_problem(const Cell& cell) const override {
    if (auto problem = model_kind().grammar_problem(cell); !problem.empty()) return problem;
    return callable_problem(cell.model->callable);
  }
  bool stops_at_first_difference() const override { return false; }
  // python_runner/python_cell.py's recorded_runs: max(2, repeats // 2) runs with per-op records, each
  // followed by a plain one.
  int extra_runs(const Cell& cell, int repeats) const override {
    return cell.model->per_op ? 2 * std::max(2, repeats / 2) : 0;
  }
  void judge(const Cell& cell, const std::vector<ProcessObservation>& observations, Verdict& verdict) const override {
    model_kind().judge(cell, observations, verdict);
    // A process compiles afresh unless the processes share an Inductor cache: bits that differ only
    // between processes may be two compiles that chose different kernels, and the report says so.
    if (verdict.divergence_scope == "across-processes" && compiles(cell.settings) &&
        cell.model->compile_cache.empty()) {
      const std::string note =
          "each process compiled the callable afresh (no --compile-cache): the processes' bits differ between two "
          "compiles, which may have chosen different kernels";
      verdict.origin_note = verdict.origin_note.empty() ? note : verdict.origin_note + "; " + note;
    }
    judge_randomness(observations, verdict);
    judge_loader(observations, verdict);
  }
  Documented documented(const Cell&, const ProbeInfo*) const override { return Documented::unknown; }
  std::vector<std::string> detail_lines(const Verdict& verdict) const override {
    auto lines = randomness_lines(verdict);  // a cause comes before any origin
    for (auto& line : model_kind().detail_lines(verdict)) lines.push_back(std::move(line));
    return lines;
  }
  void add_to_baseline(const CellReport& cell, Snapshot& baseline) const override {
    model_kind().add_to_baseline(cell, baseline);
  }
  std::string repro_skip_reason(const CellReport&, const ProbeInfo*) const override { return ""; }
  void write_repro(const Report&, ReproCell& repro, const nlohmann::json&,
                   const std::filesystem::path& folder) const override {
    const auto& cell = *repro.cell;
    if (const auto problem = callable_problem(cell.cell.model->callable); !problem.empty())
      throw std::invalid_argument(problem);
    write_script_file(folder / "runner.py", kPyCellRunner);
    write_script_file(folder / "repro.py", py_script(repro, cell));
    write_file_atomically((folder / "README.md").string(),
                          fmt::format("# {}\n\nThe Python callable {} under the cell's settings. Run "
                                      "`python repro.py` with the interpreter the audit used.\n\n"
                                      "**Before you run it:** {}.\n",
                                      markdown_text(cell.cell.key), markdown_code(cell.cell.model->callable, false),
                                      markdown_text(py_code_note(*cell.cell.model))));
  }
};

}  // namespace

const CellKind& python_kind() {
  static const PythonKind kind;
  return kind;
}

}  // namespace repro_audit
