#include "recording/origin_capture.h"

#include <ATen/record_function.h>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

namespace repro_audit {

struct OriginCapture::State {
  std::int64_t wanted = 0;
  std::int64_t next = 0;
  std::optional<CapturedOp> captured;
  std::mutex mutex;
  at::CallbackHandle handle = 0;
};

namespace {

std::atomic<OriginCapture::State*> active{nullptr};

const char* python_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kLong:
      return "torch.int64";
    case at::kInt:
      return "torch.int32";
    case at::kShort:
      return "torch.int16";
    case at::kChar:
      return "torch.int8";
    case at::kByte:
      return "torch.uint8";
    case at::kBool:
      return "torch.bool";
    default:
      return nullptr;
  }
}

std::string python_double(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "float('-inf')";
  return fmt::format("{:.17g}", value);
}

// The value as a Python expression; tensors go to `tensors` (cloned) and read as T[i].
std::string python_value(const c10::IValue& value, const std::string& type, CapturedOp& op) {
  if (value.isNone()) return "None";
  if (value.isTensor()) {
    const auto& tensor = value.toTensor();
    if (!tensor.defined()) return "None";
    op.tensors.push_back(tensor.detach().to(at::kCPU).clone());
    return fmt::format("T[{}]", op.tensors.size() - 1);
  }
  if (value.isBool()) return value.toBool() ? "True" : "False";
  if (value.isInt()) {
    if (type.find("ScalarType") != std::string::npos) {
      if (const auto* name = python_dtype(static_cast<at::ScalarType>(value.toInt()))) return name;
      op.unreproducible = "a dtype argument Python cannot spell here";
    }
    if (type.find("MemoryFormat") != std::string::npos) {
      static const char* formats[] = {"torch.contiguous_format", "torch.preserve_format", "torch.channels_last",
                                      "torch.channels_last_3d"};
      const auto index = value.toInt();
      if (index >= 0 && index < 4) return formats[index];
    }
    if (type.find("Layout") != std::string::npos) return value.toInt() == 0 ? "torch.strided" : "torch.sparse_coo";
    return std::to_string(value.toInt());
  }
  if (value.isDouble()) return python_double(value.toDouble());
  if (value.isString())
    return nlohmann::json(value.toStringRef()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (value.isDevice())
    return fmt::format(
        "torch.device({})",
        nlohmann::json(value.toDevice().str()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (value.isList() || value.isTensorList()) {
    const auto items = value.isTensorList() ? c10::impl::toList(value.toTensorList()).vec() : value.toListRef().vec();
    std::string text = "[";
    for (const auto& item : items) text += python_value(item, type, op) + ", ";
    return (items.empty() ? text : text.substr(0, text.size() - 2)) + "]";
  }
  if (value.isTuple()) {
    std::string text = "(";
    for (const auto& item : value.toTupleRef().elements()) text += python_value(item, type, op) + ", ";
    return text + ")";
  }
  op.unreproducible = fmt::format("an argument of kind {} (e.g. a Generator) cannot be saved", value.tagKind());
  return "None";
}

CapturedOp capture(const at::RecordFunction& function) {
  CapturedOp op;
  op.name = function.name();
  const char* overload = function.overload_name();
  op.overload = overload ? overload : "";
  const auto schema = function.operator_schema();
  if (function.scope() == at::RecordScope::BACKWARD_FUNCTION || !schema || op.name.rfind("aten::", 0) != 0) {
    op.unreproducible = "it is not an ATen op (an autograd node or a model's own function)";
    return op;
  }
  // A boxed call hands over its whole stack: the op's own arguments are the last num_inputs() values.
  const auto all = function.inputs();
  const auto inputs = all.slice(all.size() - std::min(all.size(), function.num_inputs()));
  const auto& arguments = schema->arguments();
  for (std::size_t i = 0; i < inputs.size() && i < arguments.size(); ++i) {
    const auto& argument = arguments[i];
    const auto text = python_value(inputs[i], argument.type()->str(), op);
    op.arguments += (op.arguments.empty() ? "" : ", ") + (argument.kwarg_only() ? argument.name() + "=" : "") + text;
  }
  return op;
}

std::unique_ptr<at::ObserverContext> on_capture_start(const at::RecordFunction& function) {
  auto* state = active.load();
  if (!state) return nullptr;
  at::DisableRecordFunctionGuard no_recording;  // the copies are not the model's ops
  std::lock_guard<std::mutex> lock(state->mutex);
  if (state->next++ == state->wanted) state->captured = capture(function);
  return nullptr;
}

}  // namespace

OriginCapture::OriginCapture(std::int64_t start) : state_(std::make_unique<State>()) {
  state_->wanted = start;
  State* expected = nullptr;
  if (!active.compare_exchange_strong(expected, state_.get()))
    throw std::logic_error("only one origin capture may exist at a time");
  state_->handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(&on_capture_start)
                                     .needsInputs(true)
                                     .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

OriginCapture::~OriginCapture() {
  at::removeCallback(state_->handle);
  active.store(nullptr);
}

std::optional<CapturedOp> OriginCapture::captured() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->captured;
}

}  // namespace repro_audit
