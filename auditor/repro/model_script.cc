#include <fmt/format.h>

#include "repro/python_script.h"
#include "repro/python_text.h"

namespace repro_audit {
namespace {

// The model's outputs by name, as the worker names them (models/model_runner.h).
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

std::string model_script(const ReproCell& repro, const std::vector<std::string>& named, bool package) {
  const auto& model = *repro.cell->cell.model;
  auto parts = cell_parts(*repro.cell, repro);
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

}  // namespace repro_audit
