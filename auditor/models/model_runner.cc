#include "models/model_runner.h"

#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <fmt/ranges.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#include <cstdlib>

#include <memory>
#include <stdexcept>

#include "common/byte_size.h"
#include "models/model_inputs.h"

namespace repro_audit {
namespace {

std::string error_text(const c10::Error& error) { return error.what_without_backtrace(); }

void flatten(const std::string& name, const c10::IValue& value, Outputs& outputs) {
  if (value.isTensor()) {
    outputs.emplace_back(name, value.toTensor().detach());
  } else if (value.isTensorList() || value.isList()) {
    const auto items = value.isTensorList() ? c10::impl::toList(value.toTensorList()).vec() : value.toListRef().vec();
    for (std::size_t i = 0; i < items.size(); ++i) flatten(fmt::format("{}.{}", name, i), items[i], outputs);
  } else if (value.isTuple()) {
    const auto& items = value.toTupleRef().elements();
    for (std::size_t i = 0; i < items.size(); ++i) flatten(fmt::format("{}.{}", name, i), items[i], outputs);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      std::ostringstream key;
      key << entry.key();
      flatten(name + "." + (entry.key().isString() ? entry.key().toStringRef() : key.str()), entry.value(), outputs);
    }
  } else if (value.isInt() || value.isDouble() || value.isBool()) {
    outputs.emplace_back(name, at::scalar_to_tensor(value.toScalar()));
  } else if (!value.isNone()) {
    throw std::invalid_argument(
        fmt::format("the model returned a {} as {}, which has no digest", value.tagKind(), name));
  }
}

std::vector<std::string> argument_names(const torch::jit::Method& method) {
  std::vector<std::string> names;
  const auto& arguments = method.function().getSchema().arguments();
  for (std::size_t i = 1; i < arguments.size(); ++i) names.push_back(arguments[i].name());  // 0 is self
  return names;
}

// Positional arguments for forward, dict entries placed by argument name; a clear error when they
// cannot fit.
std::vector<c10::IValue> forward_arguments(const torch::jit::Method& forward, ModelInputs inputs,
                                           const ModelSpec& model) {
  const auto& schema = forward.function().getSchema();
  const auto names = argument_names(forward);
  std::size_t required = 0;
  for (std::size_t i = 1; i < schema.arguments().size(); ++i)
    if (!schema.arguments()[i].default_value()) required = i;
  const auto source = model.inputs_file.empty() ? std::string("the inputs given") : "inputs file " + model.inputs_file;
  const auto signature = fmt::format("forward({})", fmt::join(names, ", "));
  auto arguments = std::move(inputs.positional);
  for (auto& [name, value] : inputs.named) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw std::invalid_argument(
          fmt::format("{} names '{}', which the model's {} does not take", source, name, signature));
    const auto index = static_cast<std::size_t>(it - names.begin());
    if (arguments.size() <= index) arguments.resize(index + 1);
    arguments[index] = value;
  }
  if (arguments.size() > names.size() || arguments.size() < required)
    throw std::invalid_argument(fmt::format(
        "{} hold {} input(s) ({}), but the model's {} takes {}{}", source, arguments.size(), inputs.described,
        signature, required == names.size() ? "" : fmt::format("{} to ", required), names.size()));
  for (std::size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].isNone() && i < required)
      throw std::invalid_argument(
          fmt::format("{} give no '{}', which the model's {} needs", source, names[i], signature));
  return arguments;
}

at::Tensor make_loss(const c10::IValue& result, LossKind kind) {
  const auto scalar = [](const at::Tensor& tensor) { return tensor.numel() == 1 && tensor.is_floating_point(); };
  if (kind != LossKind::sum) {
    if (result.isTensor() && scalar(result.toTensor())) return result.toTensor().reshape({});
    if (result.isGenericDict())
      for (const auto& entry : result.toGenericDict())
        if (entry.key().isString() && entry.key().toStringRef() == "loss" && entry.value().isTensor())
          return entry.value().toTensor().reshape({});
    if (kind == LossKind::output)
      throw std::invalid_argument(
          "--loss output: the model must return a scalar tensor, or a dict with a 'loss' entry");
  }
  at::Tensor loss;
  std::vector<c10::IValue> pending = {result};
  while (!pending.empty()) {
    auto value = pending.back();
    pending.pop_back();
    if (value.isTensor() && value.toTensor().is_floating_point() && value.toTensor().requires_grad()) {
      auto sum = value.toTensor().sum().to(at::kFloat);
      loss = loss.defined() ? loss + sum : sum;
    } else if (value.isTuple()) {
      for (const auto& item : value.toTupleRef().elements()) pending.push_back(item);
    } else if (value.isList()) {
      for (const auto& item : value.toListRef()) pending.push_back(item);
    } else if (value.isGenericDict()) {
      for (const auto& entry : value.toGenericDict()) pending.push_back(entry.value());
    }
  }
  if (!loss.defined())
    throw std::invalid_argument("--train: no output of the model depends on a parameter that requires grad");
  return loss;
}

class TorchScriptModel {
 public:
  TorchScriptModel(const ModelSpec& model, ProbeContext& context) : spec_(model) {
    // The graph executor's optimised graphs differ from the first (profiling) call's: other ops,
    // and one differentiable-graph node instead of the backward's ops. Unoptimised, every run
    // dispatches the same ATen ops, each named in the per-op records.
    torch::jit::setGraphExecutorOptimize(false);
    try {
      module_ = torch::jit::load(model.path, context.device());
    } catch (const c10::Error& error) {
      throw std::invalid_argument(
          fmt::format("{} is not a TorchScript archive torch::jit::load can read: {}", model.path, error_text(error)));
    }
    if (!module_.find_method("forward"))
      throw std::invalid_argument(fmt::format("the TorchScript module in {} has no forward method", model.path));
    arguments_ = forward_arguments(module_.get_method("forward"), load_model_inputs(model, context), model);
    module_.train(model.train);
    for (const auto& parameter : module_.named_parameters(true))
      if (parameter.value.requires_grad()) {
        names_.push_back(parameter.name);
        parameters_.push_back(parameter.value);
        initial_.push_back(parameter.value.detach().clone());
      }
    for (const auto& buffer : module_.named_buffers(true)) {
      buffers_.push_back(buffer.value);
      initial_buffers_.push_back(buffer.value.detach().clone());
    }
    if (model.train && parameters_.empty())
      throw std::invalid_argument(
          fmt::format("--train: the model in {} has no parameter that requires grad", model.path));
  }

  // The next run starts from what this makes (PreparedModel::restore).
  void restore() { restored_ = fresh_start(); }

  Outputs run() {
    Outputs outputs;
    auto arguments = restored_ ? std::move(*restored_) : fresh_start();
    restored_.reset();
    if (!spec_.train) {
      torch::NoGradGuard no_grad;
      flatten("output", module_.forward(arguments), outputs);
      return outputs;
    }
    const int steps = std::max(1, spec_.steps);
    for (int step = 1; step <= steps; ++step) {
      if (step > 1) arguments = copied(arguments_);
      const auto result = module_.forward(arguments);
      if (step == 1) flatten("output", result, outputs);
      const auto loss = make_loss(result, spec_.loss);
      outputs.emplace_back(step_loss_name(step), loss.detach());
      const auto grads = torch::autograd::grad({loss}, parameters_, {}, false, false, true);
      if (step == 1)
        for (std::size_t i = 0; i < grads.size(); ++i)
          if (grads[i].defined()) outputs.emplace_back("grad." + names_[i], grads[i]);
      if (spec_.steps == 0) break;
      torch::NoGradGuard no_grad;
      std::vector<at::Tensor> flat;
      for (std::size_t i = 0; i < parameters_.size(); ++i) {
        if (grads[i].defined()) parameters_[i].sub_(grads[i], spec_.learning_rate);
        flat.push_back(parameters_[i].detach().reshape({-1}));
      }
      outputs.emplace_back(step_params_name(step), at::cat(flat));
    }
    return outputs;
  }

 private:
  // The parameters and buffers as loaded, and fresh inputs; none of it is a recorded op.
  std::vector<c10::IValue> fresh_start() {
    at::DisableRecordFunctionGuard no_recording;
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < parameters_.size(); ++i) parameters_[i].copy_(initial_[i]);
    for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].copy_(initial_buffers_[i]);
    return copied(arguments_);
  }

  ModelSpec spec_;
  torch::jit::Module module_;
  std::vector<c10::IValue> arguments_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> parameters_, initial_, buffers_, initial_buffers_;
  std::optional<std::vector<c10::IValue>> restored_;  // the next run's inputs, once restore() made them
};

class PackageModel {
 public:
  PackageModel(const ModelSpec& model, ProbeContext& context) {
    if (model.train)
      throw std::invalid_argument(fmt::format(
          "{} is an AOTInductor package, which runs forward only: leave out --train and --steps", model.path));
    // The generated code checks each input's shape, dtype and strides only when asked; without it a
    // wrong shape can run and return a wrong-shaped result.
    ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 0);
    try {
      loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
          model.path, "model", false, 1, context.on_cuda() ? context.device().index() : -1);
    } catch (const c10::Error& error) {
      throw std::invalid_argument(
          fmt::format("{}: the AOTInductor package cannot be loaded: {}", model.path, error_text(error)));
    }
    auto inputs = load_model_inputs(model, context);
    for (auto& [name, value] : inputs.named) inputs.positional.push_back(value);  // a dict: in its order
    for (const auto& value : inputs.positional) {
      if (!value.isTensor())
        throw std::invalid_argument(
            fmt::format("an AOTInductor package takes tensors only; the inputs hold a {}", value.tagKind()));
      inputs_.push_back(value.toTensor());
    }
  }

  Outputs run() {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> inputs;
    {
      at::DisableRecordFunctionGuard no_recording;
      for (const auto& tensor : inputs_) inputs.push_back(tensor.clone());
    }
    const auto results = loader_->run(inputs);
    Outputs outputs;
    for (std::size_t i = 0; i < results.size(); ++i)
      outputs.emplace_back(results.size() == 1 ? std::string("output") : fmt::format("output.{}", i), results[i]);
    return outputs;
  }

 private:
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::vector<at::Tensor> inputs_;
};

}  // namespace

std::string step_loss_name(int step) { return step == 1 ? "loss" : fmt::format("loss.step{}", step); }
std::string step_params_name(int step) { return fmt::format("params.step{}", step); }

void check_model_file_size(const std::string& path, std::uint64_t limit, const std::string& what,
                           const std::string& option) {
  const auto refuse = [&](std::uint64_t bytes, const char* measure) {
    throw std::invalid_argument(fmt::format("{} {} is {} {}, over the limit of {} ({} raises it)", what, path,
                                            byte_size_text(bytes), measure, byte_size_text(limit), option));
  };
  std::error_code error;
  const auto on_disk = std::filesystem::file_size(path, error);
  if (!error && on_disk > limit) refuse(on_disk, "on disk");
  std::uint64_t unpacked = 0;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    for (const auto& record : reader.getAllRecords()) {
      unpacked += reader.getRecordSize(record);
      if (unpacked > limit) refuse(unpacked, "unpacked (its zip records' sizes)");
    }
  } catch (const c10::Error&) {
    // Not a zip archive: model_format() and the inputs' loader say what it is.
  }
}

ModelFormat model_format(const std::string& path) {
  bool package = false, torchscript = false, saved = false;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    package = reader.hasRecord("archive_format");
    torchscript = reader.hasRecord("constants.pkl");
    saved = reader.hasRecord("data.pkl");
  } catch (const c10::Error& error) {
    throw std::invalid_argument(
        fmt::format("{} is not a TorchScript archive (torch.jit.save) or an AOTInductor package "
                    "(torch._inductor.aoti_compile_and_package): it is not a PyTorch zip archive ({})",
                    path, error_text(error)));
  }
  if (package) return ModelFormat::aoti_package;
  if (torchscript) return ModelFormat::torchscript;
  if (saved)
    throw std::invalid_argument(fmt::format(
        "{} was written by torch.save (tensors or a state_dict), not a model: save the model with torch.jit.save, "
        "or export it and package it with torch._inductor.aoti_compile_and_package",
        path));
  throw std::invalid_argument(
      fmt::format("{} is a PyTorch archive but neither a TorchScript module nor an AOTInductor package", path));
}

PreparedModel prepare_model(const ModelSpec& model, ProbeContext& context) {
  PreparedModel prepared;
  if (model_format(model.path) == ModelFormat::aoti_package) {
    auto package = std::make_shared<PackageModel>(model, context);
    prepared.run = [package] { return package->run(); };
    prepared.per_op_unavailable =
        "an AOTInductor package runs compiled kernels, not dispatcher ops: only its outputs are digested, and the "
        "kernel trace shows the library calls it made";
    return prepared;
  }
  auto module = std::make_shared<TorchScriptModel>(model, context);
  prepared.run = [module] { return module->run(); };
  prepared.restore = [module] { module->restore(); };
  return prepared;
}

void check_model_loads(const ModelSpec& model, const std::string& device, std::uint64_t seed) {
  VariantInfo variant;
  variant.name = model_variant(model);
  ProbeContext context(at::Device(device), seed, variant);
  (void)prepare_model(model, context);
}

}  // namespace repro_audit
