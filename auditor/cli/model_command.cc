// `repro-audit model`: a user's model (TorchScript or AOTInductor package) under the flag matrix.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/audit_command.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "common/byte_size.h"
#include "common/user_error.h"
#include "config/model_config.h"
#include "models/model_checks.h"
#include "probe/probe_catalogue.h"
#include "worker/device.h"

namespace repro_audit {
namespace {

struct ModelArguments {
  RunArguments audit;
  std::string model;
  std::string name;
  std::string inputs_file;
  std::vector<std::string> inputs;
  bool train = false;
  std::optional<int> steps;
  std::optional<double> learning_rate;
  std::string loss;
  std::string per_op;
  ModelLimits limits;
};

bool has_model_options(const ModelArguments& arguments) {
  return !arguments.model.empty() || !arguments.name.empty() || !arguments.inputs_file.empty() ||
         !arguments.inputs.empty() || arguments.train || arguments.steps || arguments.learning_rate ||
         !arguments.loss.empty() || !arguments.per_op.empty();
}

ModelSpec model_from_arguments(const ModelArguments& arguments) {
  ModelSpec model;
  model.path = arguments.model;
  model.name = arguments.name;
  if (!model.name.empty() && model.name != model_name_from_path(model.name + ".x"))
    throw UserError(fmt::format("--name '{}' may hold only letters, digits, '_' and '-'", model.name));
  model.inputs_file = arguments.inputs_file;
  for (const auto& text : arguments.inputs) {
    std::string error;
    auto input = parse_model_input(text, model.inputs.size(), error);
    if (!input) throw UserError("--input: " + error);
    model.inputs.push_back(*input);
  }
  model.train = arguments.train;
  if (arguments.steps) model.steps = *arguments.steps;
  if (arguments.learning_rate) model.learning_rate = *arguments.learning_rate;
  if (!arguments.loss.empty()) model.loss = *loss_kind_from_string(arguments.loss);
  model.per_op = arguments.per_op != "off";
  check_model(model, "", "the command line");
  return model;
}

// Options that only a model given on the command line can take.
void apply_to_config_models(const ModelArguments& arguments, Config& config) {
  if (!arguments.per_op.empty())
    for (auto& model : config.models) model.per_op = arguments.per_op != "off";
}

Config model_config(const ModelArguments& arguments, const Catalogue& catalogue) {
  if (!arguments.audit.resume.empty()) {
    if (has_model_options(arguments))
      throw UserError("--resume: the audit continues with the models it started with; give no model or model options");
    auto config = make_config(arguments.audit, catalogue);
    if (config.models.empty())
      throw UserError(fmt::format("{} journals a probe audit: resume it with `repro-audit run --resume {}`",
                                  arguments.audit.resume, arguments.audit.resume));
    return config;
  }
  auto audit = arguments.audit;
  const bool config_models = !audit.config_path.empty();
  auto config = make_config(audit, catalogue);
  if (config_models && config.models.empty() && arguments.model.empty())
    throw UserError(fmt::format("{} names no models (models: [...]); name one, or give MODEL", config.source));
  if (arguments.model.empty()) {
    if (config.models.empty()) throw UserError("give a MODEL file, or a --config naming models");
    if (!arguments.inputs_file.empty() || !arguments.inputs.empty() || arguments.train || arguments.steps ||
        arguments.learning_rate || !arguments.loss.empty() || !arguments.name.empty())
      throw UserError(
          "model options (--inputs, --input, --train, --steps, --learning-rate, --loss, --name) describe "
          "a MODEL given on the command line; the config's models carry their own");
  } else {
    config.models.push_back(model_from_arguments(arguments));
  }
  apply_to_config_models(arguments, config);
  finish_model_config(arguments.audit, config);
  return config;
}

// The limits, before anything is loaded (model_spec.h ModelLimits).
void check_model_sizes(const ModelSpec& model, const ModelLimits& limits) {
  std::uint64_t generated = 0;
  for (const auto& input : model.inputs) {
    const auto bytes = model_input_bytes(input);
    if (!bytes || __builtin_add_overflow(generated, *bytes, &generated) || generated > limits.input_bytes)
      throw UserError(fmt::format(
          "--input {}: {} of generated inputs, over the limit of {} (--max-input-bytes raises it)", to_string(input),
          bytes ? byte_size_text(generated) : std::string("more than 2^64 bytes"), byte_size_text(limits.input_bytes)));
  }
  try {
    check_model_file_size(model.path, limits.model_bytes, "the model", "--max-model-bytes");
    if (!model.inputs_file.empty())
      check_model_file_size(model.inputs_file, limits.input_bytes, "the inputs file", "--max-input-bytes");
  } catch (const std::invalid_argument& error) {
    throw UserError(error.what());
  }
}

// Loads each model and its inputs here, once, so a file that is no model or inputs that do not fit
// stop the audit with a clear message before any worker starts.
void check_models_load(const Config& config, const ModelLimits& limits) {
  for (const auto& model : config.models) check_model_sizes(model, limits);
  const auto device = resolve_device(config.device);
  if (!device.unavailable.empty()) return;  // every cell is skipped, and says why
  for (const auto& model : config.models) {
    try {
      check_model_loads(model, device.device, config.seed);
    } catch (const std::invalid_argument& error) {
      throw UserError(error.what());
    }
  }
}

}  // namespace

Command add_model_command(CLI::App& app) {
  auto arguments = std::make_shared<ModelArguments>();
  arguments->audit.command = "model";
  auto* model =
      app.add_subcommand("model",
                         "Audit your own model (TorchScript file or AOTInductor .pt2 package) and name the op where "
                         "divergence starts");
  model
      ->add_option("MODEL", arguments->model,
                   "TorchScript file (torch.jit.save) or AOTInductor package (.pt2 from "
                   "torch._inductor.aoti_compile_and_package)")
      ->check(input_file());
  model->add_option("--config", arguments->audit.config_path, "YAML config; its models: list names more models")
      ->check(input_file());
  model->add_option("--name", arguments->name, "The model's name in cell keys (default: the file's stem)");
  model
      ->add_option("--inputs", arguments->inputs_file,
                   "Inputs written by torch.save: a tensor, or a tuple, list or dict of tensors")
      ->check(input_file());
  model->add_option("--input", arguments->inputs,
                    "An input generated from the seed, NAME:DTYPE[SHAPE] (repeatable, in argument order), e.g. "
                    "x:f32[4,8]; dtypes: " +
                        std::string(kInputDTypeNames));
  model->add_flag("--train", arguments->train,
                  "A run is forward, loss, backward (default: forward only, in eval mode without grad)");
  model->add_option("--steps", arguments->steps, "Also K steps of plain SGD, to see how a divergence grows")
      ->check(CLI::Range(0, 1000));
  model->add_option("--learning-rate", arguments->learning_rate, "SGD learning rate for --steps (default 0.01)")
      ->check(CLI::PositiveNumber);
  model
      ->add_option("--loss", arguments->loss,
                   "auto: the model's scalar output if it returns one, else the sum of its outputs; sum; output")
      ->check(CLI::IsMember({"auto", "sum", "output"}));
  model
      ->add_option("--per-op", arguments->per_op,
                   "on (default): digest every op's inputs and outputs to name where divergence starts; off")
      ->check(CLI::IsMember({"on", "off"}));
  model
      ->add_option("--max-model-bytes", arguments->limits.model_bytes,
                   "Refuse a model file larger than this, on disk or unpacked (default 8G; e.g. 512M, 16G)")
      ->transform(byte_count());
  model
      ->add_option("--max-input-bytes", arguments->limits.input_bytes,
                   "Refuse generated inputs (--input) or an inputs file larger than this (default 2G)")
      ->transform(byte_count());
  add_audit_options(model, arguments->audit);
  return {model, [arguments] {
            const auto registered = registered_catalogue();
            const auto config = model_config(*arguments, registered);
            const auto catalogue = catalogue_with_models(registered, config.models);
            if (arguments->audit.resume.empty()) check_models_load(config, arguments->limits);
            return run_audit_command(arguments->audit, catalogue, config);
          }};
}

}  // namespace repro_audit
