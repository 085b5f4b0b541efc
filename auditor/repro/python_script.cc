#include "repro/python_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "repro/python_runner.h"
#include "repro/python_text.h"

namespace repro_audit {
namespace {

std::string expected_message(const CellReport& cell) {
  const auto& verdict = cell.verdict;
  if (!verdict.message.empty()) return verdict.message;
  if (verdict.digests_agree) return fmt::format("one digest in {} runs, {}", verdict.runs, verdict.digest);
  return fmt::format("{} distinct digests in {} runs", verdict.distinct_digests, verdict.runs);
}

int runs_per_process(const CellReport& cell) {
  for (const auto& observation : cell.observations) {
    const auto timed = std::count_if(observation.runs.begin(), observation.runs.end(),
                                     [](const RunObservation& run) { return !run.warmup; });
    if (timed > 0) return static_cast<int>(timed);
  }
  return 10;
}

}  // namespace

PythonSettings python_settings(const FlagSet& settings, bool on_cuda) {
  PythonSettings python;
  for (const auto& [name, value] : settings) {
    if (value == kNotApplicable) continue;
    const auto* spec = find_setting(name);
    if (!spec) continue;
    // Values reach the script as code (a thread count, a seed): only the setting's own values do.
    if (!is_valid_value(*spec, value))
      throw std::invalid_argument(
          fmt::format("setting {} has the value '{}'; valid: {}", name, value, describe_values(*spec)));
    if (name == "seed") {
      python.seed = value;
      continue;
    }
    // A script is one process: only cells of one rank have one (a collective probe has no Python form).
    if (name == "ranks") continue;
    if (!spec->environment_variable.empty()) {
      const auto& variable = spec->environment_variable;
      if (value == kInherit)
        python.environment.push_back(
            fmt::format("# {}: as this shell has it (the cell inherited the audit's)", variable));
      else if (value == kUnset || (!spec->removed_by.empty() && value == spec->removed_by))
        python.environment.push_back(fmt::format("os.environ.pop({}, None)", quoted(variable)));
      else
        python.environment.push_back(fmt::format("os.environ[{}] = {}", quoted(variable), quoted(value)));
      continue;
    }
    if (spec->python) python.calls.push_back(spec->python(value));
  }
  // Python's torch registers kernels of its own for some CUDA ops (torch._native); libtorch, which the
  // probe ran, has none: switched off here so the script runs the kernels the cell ran.
  if (on_cuda) python.environment.push_back("os.environ[\"TORCH_DISABLE_NATIVE_JIT\"] = \"1\"");
  return python;
}

bool has_python_spelling(const std::string& setting) {
  const auto* spec = find_setting(setting);
  return spec && (setting == "seed" || setting == "ranks" || !spec->environment_variable.empty() || spec->python);
}

std::vector<std::string> distinct_run_digests(const CellReport& cell) {
  std::vector<std::string> digests;
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.digest.empty() && std::find(digests.begin(), digests.end(), run.digest) == digests.end())
        digests.push_back(run.digest);
  return digests;
}

std::string render_script(const ScriptParts& parts) {
  const bool on_cuda = parts.device.rfind("cuda", 0) == 0;
  const auto settings = python_settings(*parts.settings, on_cuda);
  std::string script = "#!/usr/bin/env python3\n";
  script += fmt::format("\"\"\"Reproduces {} with Python torch alone.\n\n", docstring_text(parts.subject));
  for (const auto& line : parts.about) script += docstring_text(line) + "\n";
  script += "Run: python repro.py [--runs N] [--processes P] [--json]\n\"\"\"\n";
  script += "import os\n\n# Settings read once, when torch and its libraries start: before `import torch`.\n";
  for (const auto& line : settings.environment) script += line + "\n";
  for (const auto& line : parts.environment) script += line + "\n";
  script +=
      "\nimport argparse\nimport ctypes\nimport hashlib\nimport json\nimport struct\nimport subprocess\n"
      "import sys\nimport warnings\n\nimport torch\nimport torch.nn.functional as F\n\n"
      "try:\n    import xxhash\nexcept ImportError:\n    xxhash = None\n\n";
  script += fmt::format("CELL = {}\n", quoted(parts.subject));
  script += fmt::format("DEVICE = torch.device({})\n", quoted(parts.device));
  script += fmt::format("SEED = {}\nWARMUP = {}\nRUNS = {}\nPROCESSES = {}\n", settings.seed, parts.warmup, parts.runs,
                        parts.processes);
  script += fmt::format("INVARIANCE = {}\n", parts.invariance ? "True" : "False");
  script += fmt::format("INPUTS = {}\n", parsed(parts.inputs));
  script += fmt::format("REPORT_TORCH = {}\n", quoted(parts.torch_version));
  script += fmt::format("EXPECTED = {}\n", parsed(parts.expected));
  script += "HERE = os.path.dirname(os.path.abspath(__file__))\n\n";
  for (const auto& line : parts.globals) script += line + "\n";
  script += "\n\ndef apply_settings():\n";
  for (const auto& call : settings.calls) script += "    " + call + "\n";
  for (const auto& call : parts.setup) script += "    " + call + "\n";
  if (settings.calls.empty() && parts.setup.empty()) script += "    pass\n";
  script += fmt::format("\n\ndef op({}):\n", parts.signature);
  script += fmt::format("    \"\"\"{}\"\"\"\n", docstring_text(parts.op_doc));
  script += function_body(parts.body);
  script += "\n";
  script += kPythonRunner;
  return script;
}

ScriptParts cell_parts(const CellReport& cell, const ReproCell& repro) {
  ScriptParts parts;
  parts.subject = "repro-audit cell " + cell.cell.key;
  parts.settings = &cell.cell.settings;
  parts.device = cell.cell.device;
  for (const auto& input : repro.inputs) parts.inputs.push_back(input.name);
  parts.expected = {{"verdict", to_string(cell.verdict.kind)},
                    {"digests", distinct_run_digests(cell)},
                    {"message", expected_message(cell)}};
  parts.runs = runs_per_process(cell);
  parts.processes = std::max(1, static_cast<int>(cell.observations.size()));
  parts.warmup = repro.warmup;
  parts.torch_version = repro.torch_version;
  return parts;
}

}  // namespace repro_audit
