#include "recording/op_recorder.h"

#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "hash/digest.h"
#include "hash/tensor_digest.h"
#include "recording/digest_cache.h"
#include "recording/op_arguments.h"

namespace repro_audit {
namespace {

std::atomic<OpRecorder::State*> active_state{nullptr};

class OpContext : public at::ObserverContext {
 public:
  OpRecord record;
};

std::string full_name(const at::RecordFunction& function) {
  std::string name = function.name();
  const char* overload = function.overload_name();
  if (overload && *overload) name += std::string(".") + overload;
  return name;
}

}  // namespace

struct OpRecorder::State {
  Tracer* tracer = nullptr;
  at::CallbackHandle handle = 0;
  std::mutex mutex;
  bool recording = false;
  std::size_t keep_bytes = 0, kept_bytes = 0;
  std::int64_t next_start = 0;
  std::vector<const OpRecord*> open;  // the ops begun and not yet ended, innermost last
  RecordedRun run;
  struct Schema {
    std::vector<bool> outs;  // which arguments are out=
    bool writes = true;      // whether it may write an argument (in place, out=); unknown: assume so
    bool view = false;       // returns views of its inputs and writes nothing
  };
  std::unordered_map<std::string, Schema> schemas;                   // by op name
  std::unordered_map<std::int64_t, std::string> module_of_sequence;  // autograd sequence number -> module
  Uninitialised uninitialised;
  DigestCache digests;
  std::unique_ptr<TensorDigester> device;  // digests a device's tensors there (null: on the host)
  bool deferring = false;                  // this run's device digests are tokens until it ends
  const RecordedRun* reference = nullptr;  // a later run: copies only where it parts from this run

  // An op's digest: of its text, or, while the text holds device tokens, the text itself (end_run
  // digests it once the tokens are resolved).
  std::string digest_of(const std::string& text) const {
    return deferring && TensorDigester::has_token(text) ? text : digest_text(text);
  }

  // Reads the device's digests back and digests every op's text that held a token.
  void resolve_tokens() {
    if (!device) return;
    device->resolve();
    for (auto& op : run.ops)
      for (auto* text : {&op.inputs, &op.outputs})
        if (TensorDigester::has_token(*text)) *text = digest_text(device->substitute(*text));
    digests.rewrite([&](std::string& digest) {
      if (TensorDigester::has_token(digest)) digest = device->substitute(digest);
    });
  }

  // Drops the cached digests of every tensor an op that may write is handed.
  void drop_written(const c10::ArrayRef<c10::IValue>& arguments) {
    for (const auto& value : arguments) {
      if (value.isTensor()) digests.drop_storage(value.toTensor());
      if (value.isTensorList())
        for (const auto& tensor : value.toTensorVector()) digests.drop_storage(tensor);
      if (value.isList())
        for (const auto& item : value.toListRef())
          if (item.isTensor()) digests.drop_storage(item.toTensor());
    }
  }

  // Whether run k's op at this place received the reference run's inputs and returned other outputs.
  bool parts_from_reference(const OpRecord& record) const {
    const auto place = run.ops.size();
    if (!reference || place >= reference->ops.size()) return false;
    const auto& before = reference->ops[place];
    return before.name == record.name && before.module == record.module && before.inputs == record.inputs &&
           before.outputs != record.outputs;
  }

  const Schema& schema_of(const at::RecordFunction& function, const std::string& name) {
    auto it = schemas.find(name);
    if (it != schemas.end()) return it->second;
    Schema schema;
    if (const auto full = function.operator_schema()) {
      for (const auto& argument : full->arguments()) schema.outs.push_back(argument.is_out());
      schema.writes = full->is_mutable();
      schema.view = !schema.writes && !full->returns().empty();
      for (const auto& returned : full->returns())
        if (!returned.alias_info() || returned.alias_info()->isWrite()) schema.view = false;
    }
    return schemas.emplace(name, std::move(schema)).first->second;
  }

  std::unique_ptr<at::ObserverContext> start(const at::RecordFunction& function) {
    at::DisableRecordFunctionGuard no_recording;  // the digests' own ops are not the model's
    at::NoGradGuard no_grad;
    std::lock_guard<std::mutex> lock(mutex);
    if (!recording) return nullptr;
    auto context = std::make_unique<OpContext>();
    auto& record = context->record;
    record.name = full_name(function);
    record.depth = static_cast<int>(open.size());
    record.start = next_start++;
    record.module = module_path(torch::jit::currentModuleHierarchy());
    if (record.module.empty() && !open.empty()) record.module = open.back()->module;
    if (record.module.empty() && function.scope() == at::RecordScope::BACKWARD_FUNCTION) {
      auto it = module_of_sequence.find(function.seqNr());
      if (it != module_of_sequence.end()) record.module = it->second;
    }
    if (function.scope() == at::RecordScope::FUNCTION && function.seqNr() >= 0 && !record.module.empty())
      module_of_sequence.emplace(function.seqNr(), record.module);
    const auto& schema = schema_of(function, record.name);
    const auto& outs = schema.outs;
    std::string text;
    // A boxed call (the TorchScript interpreter) hands over its whole stack: the op's own arguments
    // are the last num_inputs() values.
    const auto all = function.inputs();
    const auto inputs = all.slice(all.size() - std::min(all.size(), function.num_inputs()));
    const bool skip_self = overwrites_self(record.name);
    Digests cached{digests, open.empty(), device.get(), deferring};
    for (std::size_t i = skip_self ? 1 : 0; i < inputs.size(); ++i)
      if (i >= outs.size() || !outs[i]) describe(text, inputs[i], uninitialised, schema.view, &cached);
    if (schema.writes) drop_written(inputs);
    record.inputs = digest_of(text);
    open.push_back(&record);
    if (tracer) tracer->enter_op(record.start);
    return context;
  }

  void end(const at::RecordFunction& function, OpContext& context) {
    at::DisableRecordFunctionGuard no_recording;
    at::NoGradGuard no_grad;
    std::lock_guard<std::mutex> lock(mutex);
    if (tracer) tracer->exit_op();
    auto found = std::find(open.begin(), open.end(), &context.record);
    if (found != open.end()) open.erase(found);
    if (!recording) return;
    auto& record = context.record;
    std::vector<at::Tensor> copies;
    const auto& all = function.outputs();
    const auto count = std::min(all.size(), function.num_outputs());
    const c10::ArrayRef<c10::IValue> outputs(all.data() + (all.size() - count), count);
    if (uninitialised_output(record.name)) {
      for (const auto& output : outputs)
        if (output.isTensor()) uninitialised.insert(output.toTensor());
    } else {
      // An op that writes its outputs' storage (in place, out=) initialises it; a view of
      // uninitialised storage stays uninitialised.
      if (schema_of(function, record.name).writes)
        for (const auto& output : outputs)
          if (output.isTensor()) uninitialised.erase(output.toTensor());
      const bool view = schema_of(function, record.name).view;
      std::string text;
      Digests cached{digests, open.empty(), device.get(), deferring};
      for (const auto& output : outputs) describe(text, output, uninitialised, view, &cached);
      record.outputs = digest_of(text);
      if (!view && (!reference || parts_from_reference(record)))
        for (const auto& output : outputs) {
          if (!output.isTensor() || !output.toTensor().defined() || kept_bytes >= keep_bytes) continue;
          try {
            copies.push_back(canonical_tensor(output.toTensor()).clone());
            kept_bytes += copies.back().nbytes();
          } catch (const std::exception&) {
          }
        }
    }
    if (run.ops.size() >= kMaxOpsPerRun) {
      run.truncated = true;
      return;
    }
    run.ops.push_back(std::move(record));
    run.kept.push_back(std::move(copies));
  }
};

namespace {

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& function) {
  auto* state = active_state.load();
  return state ? state->start(function) : nullptr;
}

void on_end(const at::RecordFunction& function, at::ObserverContext* context) {
  auto* state = active_state.load();
  if (state && context) state->end(function, static_cast<OpContext&>(*context));
}

}  // namespace

OpRecorder::OpRecorder(Tracer* tracer, std::unique_ptr<TensorDigester> device) : state_(std::make_unique<State>()) {
  state_->tracer = tracer;
  state_->device = std::move(device);
  State* expected = nullptr;
  if (!active_state.compare_exchange_strong(expected, state_.get()))
    throw std::logic_error("only one op recorder may exist at a time");
  state_->handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                     .needsInputs(true)
                                     .needsOutputs(true)
                                     .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

OpRecorder::~OpRecorder() {
  at::removeCallback(state_->handle);
  active_state.store(nullptr);
}

void OpRecorder::begin_run(std::size_t keep_bytes, const RecordedRun* reference) {
  at::DisableRecordFunctionGuard no_recording;  // the device digests' own ops (zeroing, reading back)
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->resolve_tokens();  // a run that ended by throwing: its tokens may still be in the cache
  state_->run = RecordedRun{};
  state_->reference = reference;
  state_->digests.drop_freed();
  state_->keep_bytes = keep_bytes;
  state_->kept_bytes = 0;
  state_->next_start = 0;
  state_->open.clear();
  state_->module_of_sequence.clear();
  state_->uninitialised.clear();
  // A run compared with a reference as it records needs each op's digests at once.
  state_->deferring = state_->device && !reference;
  if (state_->device) state_->device->clear();
  state_->recording = true;
}

RecordedRun OpRecorder::end_run() {
  at::DisableRecordFunctionGuard no_recording;
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->recording = false;
  state_->resolve_tokens();
  return std::move(state_->run);
}

bool OpRecorder::digests_on_device() const { return state_->device != nullptr; }

std::string op_sequence_digest(const std::vector<OpRecord>& ops) {
  std::string text;
  for (const auto& op : ops) text += op.name + '\n' + op.module + '\n' + op.inputs + '\n' + op.outputs + '\n';
  return digest_text(text);
}

std::string module_path(const std::vector<std::string>& hierarchy) {
  // Entries may each hold one frame or several joined by '/'.
  std::vector<std::string> frames;
  for (const auto& entry : hierarchy)
    for (std::size_t start = 0; start <= entry.size();) {
      const auto slash = entry.find('/', start);
      frames.push_back(entry.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
  std::string path;
  for (const auto& entry : frames) {
    const auto paren = entry.find('(');
    if (paren == std::string::npos || paren == 0) continue;
    const auto instance = entry.substr(0, paren);
    if (instance == "TOP" || instance == "SELF") continue;
    path += (path.empty() ? "" : ".") + (instance == "INSTANCE_NAME_UNKNOWN" ? std::string("?") : instance);
  }
  return path;
}

}  // namespace repro_audit
