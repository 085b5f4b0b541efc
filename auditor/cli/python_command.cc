// `repro-audit py`: the user's Python callable (a training step, a module's forward, a compiled
// function) under the flag matrix, run by the user's interpreter through the shipped runner.
#include <unistd.h>

#include <fmt/format.h>

#include <memory>

#include "cli/audit_command.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "common/user_error.h"
#include "config/model_config.h"
#include "worker/probe_catalogue.h"
#include "worker/python_worker.h"

namespace repro_audit {
namespace {

struct PythonArguments {
  RunArguments audit;
  std::string callable;
  std::string name;
  std::string python;
  bool parameters = false;
  std::string per_op;
  std::string compile_cache;
};

// The interpreter: --python, else the one next to the libtorch in use; an executable file either way.
std::string interpreter(const std::string& given) {
  const auto python = given.empty() ? python_next_to_libtorch() : given;
  if (python.empty())
    throw UserError("no Python found next to the libtorch in use; name one with --python (it needs torch and xxhash)");
  if (::access(python.c_str(), X_OK) != 0) throw UserError(fmt::format("--python {}: not an executable file", python));
  return python;
}

Config python_config(const PythonArguments& arguments, const Catalogue& catalogue) {
  if (!arguments.audit.resume.empty()) {
    if (!arguments.callable.empty())
      throw UserError("--resume: the audit continues with the callables it started with; give no CALLABLE");
    return make_config(arguments.audit, catalogue);
  }
  auto config = make_config(arguments.audit, catalogue);
  if (!arguments.callable.empty()) {
    ModelSpec model;
    model.callable = arguments.callable;
    model.name = arguments.name;
    if (!model.name.empty() && model.name != model_name_from_path(model.name + ".x"))
      throw UserError(fmt::format("--name '{}' may hold only letters, digits, '_' and '-'", model.name));
    check_model(model, "", "the command line");
    config.models.push_back(model);
  }
  if (config.models.empty())
    throw UserError("give a CALLABLE (MODULE:CALLABLE or FILE.py:CALLABLE), or a --config naming callables");
  for (auto& model : config.models) {
    if (!is_python_model(model))
      throw UserError(fmt::format("model '{}' is a TorchScript or AOTInductor file: audit it with `repro-audit model`",
                                  model.name));
    model.python = interpreter(arguments.python.empty() ? model.python : arguments.python);
    if (arguments.parameters) model.parameters = true;
    if (!arguments.per_op.empty()) model.per_op = arguments.per_op != "off";
    model.compile_cache = arguments.compile_cache;
  }
  finish_model_config(arguments.audit, config);
  return config;
}

}  // namespace

Command add_python_command(CLI::App& app) {
  auto arguments = std::make_shared<PythonArguments>();
  arguments->audit.command = "py";
  auto* py = app.add_subcommand(
      "py",
      "Audit your own Python callable (a training step, a forward, a torch.compile'd function), eager or compiled");
  py->add_option("CALLABLE", arguments->callable,
                 "MODULE:CALLABLE (importable from here) or FILE.py:CALLABLE; it returns the step to run, or "
                 "(step, args) or (step, args, state), or is the step itself; it may take seed= and device=");
  py->add_option("--config", arguments->audit.config_path, "YAML config; its models: list names callables (callable:)")
      ->check(input_file());
  py->add_option("--name", arguments->name, "The callable's name in cell keys (default: MODULE-CALLABLE)");
  py->add_option("--python", arguments->python,
                 "The interpreter that runs the callable (default: the Python next to the libtorch in use); it "
                 "needs torch and xxhash");
  py->add_flag("--parameters", arguments->parameters,
               "Also digest the state's parameters and their gradients after each run (params.NAME, grad.NAME)");
  py->add_option("--per-op", arguments->per_op,
                 "on (default): per-op digests of eager runs name the op where divergence starts; off")
      ->check(CLI::IsMember({"on", "off"}));
  py->add_option("--compile-cache", arguments->compile_cache,
                 "An Inductor cache folder every process shares (default: each process compiles afresh)");
  add_audit_options(py, arguments->audit);
  return {py, [arguments] {
            const auto registered = registered_catalogue();
            const auto config = python_config(*arguments, registered);
            return run_audit_command(arguments->audit, catalogue_with_models(registered, config.models), config);
          }};
}

}  // namespace repro_audit
