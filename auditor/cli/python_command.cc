// `repro-audit py`: the user's Python callable (a training step, a module's forward, a compiled
// function) under the flag matrix, run by the user's interpreter through the shipped runner.
#include <fmt/format.h>

#include <map>
#include <memory>

#include "audit/audit.h"
#include "cli/audit_command.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "common/user_error.h"
#include "config/model_config.h"
#include "probe/probe_catalogue.h"
#include "python_runner/python_worker.h"
#include "repro/python_check.h"

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
  int loader_epochs = 0;  // 0: the model's (kDefaultLoaderEpochs)
  int loader_batches = 0;
};

Config python_config(const PythonArguments& arguments, const Catalogue& catalogue, PythonChecks& checks) {
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
    if (arguments.parameters) model.parameters = true;
    if (!arguments.per_op.empty()) model.per_op = arguments.per_op != "off";
    if (arguments.loader_epochs > 0) model.loader_epochs = arguments.loader_epochs;
    if (arguments.loader_batches > 0) model.loader_batches = arguments.loader_batches;
  }
  check_python_setup(config, arguments.python, arguments.compile_cache, arguments.audit.config_path, &checks);
  finish_model_config(arguments.audit, config);
  return config;
}

}  // namespace

// A setup that cannot run the callable is the user's to fix (exit 2), never a cell's verdict: the
// runner digests with xxhash, so it is imported with torch.
void check_python_setup(Config& config, const std::string& python, const std::string& compile_cache,
                        const std::string& config_path, PythonChecks* started) {
  PythonChecks own;
  auto& checks = started ? *started : own;
  const auto cache = compile_cache.empty() ? "" : checked_writable_folder("--compile-cache", compile_cache);
  std::map<std::string, std::string> checked;  // option and word -> the interpreter, each asked once
  for (auto& model : config.models) {
    if (!is_python_model(model)) continue;
    std::string option = "--python", word = python;
    if (word.empty() && !model.python.empty()) {
      option = fmt::format("{}: model '{}': python", config_path, model.name);
      word = model.python;
    }
    if (word.empty()) {
      option = "the Python next to libtorch";
      word = python_next_to_libtorch();
      if (word.empty())
        throw UserError(
            "no Python found next to the libtorch in use; name one with --python (it needs torch and xxhash)");
    }
    const auto key = option + "\n" + word;
    if (!checked.count(key)) checked[key] = checks.start(option, word, temporary_folder(), {"xxhash"});
    model.python = checked.at(key);
    model.compile_cache = cache;
  }
  if (!started) checks.wait();
}

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
  py->add_option("--loader-epochs", arguments->loader_epochs,
                 fmt::format("A callable that makes a DataLoader (or any iterable of batches): epochs each run "
                             "iterates (default {})",
                             kDefaultLoaderEpochs))
      ->check(CLI::Range(1, kMaxLoaderEpochs));
  py->add_option("--loader-batches", arguments->loader_batches,
                 fmt::format("A DataLoader's batches each epoch digests, at most (default {})", kDefaultLoaderBatches))
      ->check(CLI::Range(1, kMaxLoaderBatches));
  add_audit_options(py, arguments->audit);
  return {py,
          [arguments] {
            const auto registered = registered_catalogue();
            PythonChecks checks;  // answered while the audit's first workers start
            const auto config = python_config(*arguments, registered, checks);
            return run_audit_command(arguments->audit, catalogue_with_models(registered, config.models), config,
                                     &checks);
          },
          /*needs_torch=*/{},
          /*cpu_side_may_run=*/true};  // repro-audit-cpu runs it where it can (cli/torch_side.h)
}

}  // namespace repro_audit
