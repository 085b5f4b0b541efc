#include "models/model_inputs.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace repro_audit {
namespace {

at::ScalarType input_type(const std::string& dtype) {
  if (dtype == "f32") return at::kFloat;
  if (dtype == "f64") return at::kDouble;
  if (dtype == "f16") return at::kHalf;
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "i64") return at::kLong;
  if (dtype == "i32") return at::kInt;
  if (dtype == "bool") return at::kBool;
  throw std::invalid_argument(fmt::format("unknown input dtype '{}'; valid dtypes: {}", dtype, kInputDTypeNames));
}

std::string describe(const c10::IValue& value) {
  if (value.isTensor()) {
    std::ostringstream out;
    const auto& tensor = value.toTensor();
    out << tensor.scalar_type() << tensor.sizes();
    return out.str();
  }
  return value.tagKind();
}

c10::IValue on_device(const c10::IValue& value, ProbeContext& context, const std::string& file) {
  if (value.isTensor()) return context.to_device(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const auto& tensor : value.toTensorVector()) list.push_back(context.to_device(tensor));
    return list;
  }
  if (value.isInt() || value.isDouble() || value.isBool() || value.isNone()) return value;
  throw std::invalid_argument(fmt::format(
      "inputs file {} holds a {}; it must hold a tensor, or a tuple, list or dict of tensors", file, value.tagKind()));
}

c10::IValue copy_value(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor().clone();
  if (value.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const auto& tensor : value.toTensorVector()) list.push_back(tensor.clone());
    return list;
  }
  return value;
}

}  // namespace

ModelInputs load_model_inputs(const ModelSpec& model, ProbeContext& context) {
  ModelInputs inputs;
  if (model.inputs_file.empty()) {
    for (const auto& input : model.inputs) {
      const auto type = input_type(input.dtype);
      at::Tensor tensor;
      if (at::isFloatingType(type))
        tensor = context.randn(input.shape, type);
      else
        tensor = context.randint(type == at::kBool ? 2 : 10, input.shape).to(type);  // integers from [0, 10)
      inputs.named.emplace_back(input.name, tensor);
    }
    // Generated inputs are positional, in the order given; their names are for the report.
    for (auto& [name, value] : inputs.named) {
      inputs.described += (inputs.described.empty() ? "" : ", ") + name + ": " + describe(value);
      inputs.positional.push_back(std::move(value));
    }
    inputs.named.clear();
    return inputs;
  }
  std::ifstream file(model.inputs_file, std::ios::binary);
  if (!file) throw std::invalid_argument(fmt::format("cannot read the inputs file {}", model.inputs_file));
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const c10::Error& error) {
    throw std::invalid_argument(fmt::format("inputs file {} is not a file written by torch.save: {}", model.inputs_file,
                                            error.what_without_backtrace()));
  }
  const auto& path = model.inputs_file;
  if (value.isTensor()) {
    inputs.positional.push_back(on_device(value, context, path));
  } else if (value.isTuple()) {
    for (const auto& item : value.toTupleRef().elements()) inputs.positional.push_back(on_device(item, context, path));
  } else if (value.isList()) {
    for (const auto& item : value.toListRef()) inputs.positional.push_back(on_device(item, context, path));
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      if (!entry.key().isString())
        throw std::invalid_argument(fmt::format("inputs file {}: a dict of inputs needs string keys", path));
      inputs.named.emplace_back(entry.key().toStringRef(), on_device(entry.value(), context, path));
    }
  } else {
    throw std::invalid_argument(
        fmt::format("inputs file {} holds a {}; it must hold a tensor, or a tuple, list or dict of tensors", path,
                    value.tagKind()));
  }
  for (const auto& item : inputs.positional)
    inputs.described += (inputs.described.empty() ? "" : ", ") + describe(item);
  for (const auto& [name, item] : inputs.named)
    inputs.described += (inputs.described.empty() ? "" : ", ") + name + ": " + describe(item);
  return inputs;
}

std::vector<c10::IValue> copied(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> copies;
  copies.reserve(values.size());
  for (const auto& value : values) copies.push_back(copy_value(value));
  return copies;
}

}  // namespace repro_audit
