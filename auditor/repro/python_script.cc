#include "repro/python_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "repro/python_runner.h"

namespace repro_audit {
namespace {

std::string python_bool(const std::string& value) { return value == "true" ? "True" : "False"; }

// A Python string literal holding `text` as data: JSON's string escapes are Python's too, and bytes that
// are not UTF-8 become U+FFFD instead of a broken script.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON value as data the script parses, never as Python source.
std::string parsed(const nlohmann::json& value) {
  return "json.loads(" + quoted(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + ")";
}

// How each in-process setting is spelled in Python; environment settings are spelled from their
// variable. A setting with neither is a gap the unit test finds (python_script_test.cc).
struct PythonSpelling {
  const char* name;
  std::string (*line)(const std::string& value);
};

const std::vector<PythonSpelling>& spellings() {
  static const std::vector<PythonSpelling> table = {
      {"allow_tf32",
       [](const std::string& v) {
         return fmt::format("torch.backends.cuda.matmul.allow_tf32 = {0}\n    torch.backends.cudnn.allow_tf32 = {0}",
                            python_bool(v));
       }},
      {"cudnn_benchmark", [](const std::string& v) { return "torch.backends.cudnn.benchmark = " + python_bool(v); }},
      {"cudnn_deterministic",
       [](const std::string& v) { return "torch.backends.cudnn.deterministic = " + python_bool(v); }},
      {"cudnn_enabled", [](const std::string& v) { return "torch.backends.cudnn.enabled = " + python_bool(v); }},
      {"deterministic_algorithms",
       [](const std::string& v) {
         return fmt::format("torch.use_deterministic_algorithms({}, warn_only={})", v == "off" ? "False" : "True",
                            v == "warn" ? "True" : "False");
       }},
      {"fill_uninitialized_memory",
       [](const std::string& v) { return "torch.utils.deterministic.fill_uninitialized_memory = " + python_bool(v); }},
      {"seed", nullptr},  // SEED: torch.manual_seed before every run, as the worker does
      {"threads", [](const std::string& v) { return "torch.set_num_threads(" + v + ")"; }},
  };
  return table;
}

std::string python_dtype(DType dtype) { return std::string("torch.") + long_name(dtype); }

// The probe's template, its common indentation removed, indented as a function body.
std::string function_body(const std::string& code) {
  std::vector<std::string> lines;
  std::istringstream in(code);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.front().find_first_not_of(" \t") == std::string::npos) lines.erase(lines.begin());
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos) lines.pop_back();
  std::size_t common = std::string::npos;
  for (const auto& line : lines)
    if (const auto first = line.find_first_not_of(' '); first != std::string::npos) common = std::min(common, first);
  std::string body;
  for (const auto& line : lines)
    body += line.find_first_not_of(' ') == std::string::npos ? "\n" : "    " + line.substr(common) + "\n";
  return body;
}

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
    for (const auto& spelling : spellings())
      if (spelling.name == name && spelling.line) python.calls.push_back(spelling.line(value));
  }
  // Python's torch registers kernels of its own for some CUDA ops (torch._native); libtorch, which the
  // probe ran, has none: switched off here so the script runs the kernels the cell ran.
  if (on_cuda) python.environment.push_back("os.environ[\"TORCH_DISABLE_NATIVE_JIT\"] = \"1\"");
  return python;
}

bool has_python_spelling(const std::string& setting) {
  const auto* spec = find_setting(setting);
  if (spec && !spec->environment_variable.empty()) return true;
  return std::any_of(spellings().begin(), spellings().end(),
                     [&](const PythonSpelling& spelling) { return spelling.name == setting; });
}

std::vector<std::string> distinct_run_digests(const CellReport& cell) {
  std::vector<std::string> digests;
  for (const auto& observation : cell.observations)
    for (const auto& run : observation.runs)
      if (!run.digest.empty() && std::find(digests.begin(), digests.end(), run.digest) == digests.end())
        digests.push_back(run.digest);
  return digests;
}

namespace {

// Text inside the script's """docstrings""": a quote or backslash cannot end or bend them.
std::string docstring_text(std::string_view text) {
  std::string safe;
  for (const char c : valid_utf8(text)) {
    if (c == '\\' || c == '"')
      safe += {'\\', c};
    else
      safe += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  return safe;
}

}  // namespace

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

std::string python_script(const ReproCell& repro) {
  auto parts = cell_parts(*repro.cell, repro);
  parts.about = {fmt::format("{}: {}.", repro.probe->name, repro.probe->description),
                 fmt::format("Variant {}: {}.", repro.variant->name, repro.variant->description)};
  if (!repro.probe->python.differs_reason.empty())
    parts.about.push_back("Not bit-identical with the audited probe: " + repro.probe->python.differs_reason);
  parts.invariance = repro.probe->invariance != Invariance::none;
  parts.globals = {"# The variant's parameters.", "device = DEVICE",
                   fmt::format("dtype = {}", repro.variant->dtype ? python_dtype(*repro.variant->dtype) : "None")};
  for (const auto& [name, value] : repro.variant->parameters)
    parts.globals.push_back(fmt::format("{} = {}", name, quoted(value)));
  for (const auto& input : parts.inputs)
    if (!is_identifier(input))
      throw std::invalid_argument(fmt::format("the input name {} is not an identifier", quoted(input)));
  parts.signature = fmt::format("{}", fmt::join(parts.inputs, ", "));
  parts.op_doc = fmt::format("The op of {}/{}, as the probe runs it.", repro.probe->name, repro.variant->name);
  parts.body = repro.probe->python.code;
  return render_script(parts);
}

namespace {

// The model's outputs by name, as the worker names them (worker/model_runner.h).
constexpr const char* kFlatten = R"(
    def flatten(name, value, outputs):
        if isinstance(value, torch.Tensor):
            outputs[name] = value.detach()
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                flatten(f"{name}.{i}", item, outputs)
        elif isinstance(value, dict):
            for key, item in value.items():
                flatten(f"{name}.{key}", item, outputs)
        elif isinstance(value, (int, float, bool)):
            outputs[name] = torch.tensor(value)
        return outputs
    def arguments():
        # Fresh copies each run, and the parameters and buffers as loaded: every run starts alike.
        with torch.no_grad():
            for parameter, initial in zip(PARAMETERS, INITIAL):
                parameter.copy_(initial)
            for buffer, initial in zip(BUFFERS, INITIAL_BUFFERS):
                buffer.copy_(initial)
        positional = [value.clone() for name, value in inputs.items() if name not in NAMED]
        named = {name: value.clone() for name, value in inputs.items() if name in NAMED}
        return positional, named
)";

constexpr const char* kForward = R"(
    positional, named = arguments()
    with torch.no_grad():
        return flatten("output", MODEL(*positional, **named), {})
)";

// The worker's training run: forward, loss, the gradients of every parameter that requires grad,
// and with steps, plain SGD steps, each followed by the next forward and backward.
constexpr const char* kTrain = R"(
    def make_loss(result):
        def scalar(tensor):
            return tensor.numel() == 1 and tensor.is_floating_point()
        if LOSS != "sum":
            if isinstance(result, torch.Tensor) and scalar(result):
                return result.reshape(())
            if isinstance(result, dict) and isinstance(result.get("loss"), torch.Tensor):
                return result["loss"].reshape(())
        loss, pending = None, [result]
        while pending:
            value = pending.pop()
            if isinstance(value, torch.Tensor) and value.is_floating_point() and value.requires_grad:
                total = value.sum().to(torch.float32)
                loss = total if loss is None else loss + total
            elif isinstance(value, (list, tuple)):
                pending.extend(value)
            elif isinstance(value, dict):
                pending.extend(value.values())
        return loss
    outputs = {}
    positional, named = arguments()
    for step in range(1, max(1, STEPS) + 1):
        if step > 1:
            positional = [value.clone() for value in positional]
            named = {name: value.clone() for name, value in named.items()}
        result = MODEL(*positional, **named)
        if step == 1:
            flatten("output", result, outputs)
        loss = make_loss(result)
        outputs["loss" if step == 1 else f"loss.step{step}"] = loss.detach()
        grads = torch.autograd.grad([loss], PARAMETERS, allow_unused=True)
        if step == 1:
            for name, grad in zip(PARAMETER_NAMES, grads):
                if grad is not None:
                    outputs["grad." + name] = grad
        if STEPS == 0:
            break
        with torch.no_grad():
            for parameter, grad in zip(PARAMETERS, grads):
                if grad is not None:
                    parameter.sub_(grad, alpha=LEARNING_RATE)
            outputs[f"params.step{step}"] = torch.cat([p.detach().reshape(-1) for p in PARAMETERS])
    return outputs
)";

}  // namespace

std::string model_script(const ReproCell& repro, const std::vector<std::string>& named) {
  const auto& model = *repro.cell->cell.model;
  auto parts = cell_parts(*repro.cell, repro);
  const bool package = model.path.size() > 4 && model.path.substr(model.path.size() - 4) == ".pt2";
  parts.about = {fmt::format("The model {} ({}), {}, as `repro-audit model` ran it.", model.path,
                             package ? "an AOTInductor package" : "TorchScript",
                             model.train ? fmt::format("training, {} SGD step(s)", model.steps) : "forward only")};
  parts.globals = {fmt::format("MODEL_PATH = {}", quoted(model.path)),
                   fmt::format("NAMED = {}", parsed(named)),
                   fmt::format("STEPS = {}", model.steps),
                   fmt::format("LEARNING_RATE = float({})", quoted(fmt::format("{:.17g}", model.learning_rate))),
                   fmt::format("LOSS = {}", quoted(to_string(model.loss))),
                   "MODEL = None",
                   "PARAMETER_NAMES, PARAMETERS, INITIAL, BUFFERS, INITIAL_BUFFERS = [], [], [], [], []"};
  parts.signature = "**inputs";
  if (package) {
    parts.environment.push_back("os.environ.setdefault(\"AOTI_RUNTIME_CHECK_INPUTS\", \"1\")");
    parts.setup = {"global MODEL", "import torch._inductor", "MODEL = torch._inductor.aoti_load_package(MODEL_PATH)"};
    parts.body = R"(
        with torch.no_grad():
            results = MODEL(*[value.clone() for value in inputs.values()])
        if isinstance(results, torch.Tensor):
            results = [results]
        return {"output" if len(results) == 1 else f"output.{i}": r for i, r in enumerate(results)})";
    parts.op_doc = "The package's forward on its inputs.";
    return render_script(parts);
  }
  // As the worker runs it: unoptimised graphs, so every run dispatches the same ATen ops.
  parts.setup = {"global MODEL",
                 "torch._C._set_graph_executor_optimize(False)",
                 "MODEL = torch.jit.load(MODEL_PATH, map_location=DEVICE)",
                 fmt::format("MODEL.train({})", model.train ? "True" : "False"),
                 "for name, parameter in MODEL.named_parameters():",
                 "    if parameter.requires_grad:",
                 "        PARAMETER_NAMES.append(name)",
                 "        PARAMETERS.append(parameter)",
                 "        INITIAL.append(parameter.detach().clone())",
                 "for name, buffer in MODEL.named_buffers():",
                 "    BUFFERS.append(buffer)",
                 "    INITIAL_BUFFERS.append(buffer.detach().clone())"};
  parts.body = std::string(kFlatten) + (model.train ? kTrain : kForward);
  parts.op_doc = model.train ? "The model's training run on its inputs." : "The model's forward on its inputs.";
  return render_script(parts);
}

std::string origin_script(const ReproCell& repro, const CapturedOrigin& origin) {
  auto parts = cell_parts(*repro.cell, repro);
  const auto& cell = *repro.cell;
  parts.subject = fmt::format("{}, the op where the divergence of model cell {} starts", origin.name, cell.cell.key);
  parts.about = {fmt::format("Where it starts: {}", origin.where),
                 "The op alone, on the arguments it had in that run (inputs.pt), repeated: the model's first op whose",
                 "inputs agreed between runs and whose outputs did not."};
  parts.inputs.clear();
  for (const auto& input : origin.tensors) parts.inputs.push_back(input.name);
  parts.expected = {{"verdict", "nondeterministic"},
                    {"digests", nlohmann::json::array()},
                    {"message", "the model's divergence starts at this op: " + origin.where}};
  const auto op = origin.name.substr(origin.name.find("::") + 2);
  if (origin.name.rfind("aten::", 0) != 0 || !is_identifier(op) ||
      (!origin.overload.empty() && !is_identifier(origin.overload)))
    throw std::invalid_argument(fmt::format("the origin op {} is not an ATen op name", quoted(origin.name)));
  parts.globals = {fmt::format("OP = torch.ops.aten.{}.{}", op, origin.overload.empty() ? "default" : origin.overload)};
  parts.body = fmt::format(R"(
      # Fresh copies each run: an in-place op writes its arguments.
      T = [inputs[f"T[{{i}}]"].clone() for i in range(len(inputs))]
      result = OP({})
      results = list(result) if isinstance(result, (list, tuple)) else [result]
      results = [r for r in results if isinstance(r, torch.Tensor)]
      return {{"output" if len(results) == 1 else f"output.{{i}}": r for i, r in enumerate(results)}})",
                           origin.arguments);
  parts.signature = "**inputs";
  parts.op_doc = fmt::format("{} as the model called it.", origin.name);
  return render_script(parts);
}

std::string folder_name_of(const std::string& key) {
  std::string name;
  for (const char c : key)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '=' ? c : '_';
  // Never "", "." or "..", nor hidden: a name that starts with a letter, digit or '_' stays in its folder.
  if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_')) name = "_" + name;
  return name;
}

bool is_identifier(const std::string& text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string valid_utf8(std::string_view text) {
  // dump() writes bytes that are not UTF-8 as U+FFFD; parsing that literal back gives the text.
  return nlohmann::json::parse(
             nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

}  // namespace repro_audit
