#pragma once
// A user's model as the subject of audit cells: a TorchScript file or an AOTInductor package, its
// inputs, and what one run does with it. Plain data; models/model_runner.cc loads and runs it.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/catalogue.h"

namespace repro_audit {

// One input generated from the seed: "x:f32[4,8]".
struct ModelInput {
  std::string name;
  std::string dtype;  // f32 f64 f16 bf16 i64 i32 bool
  std::vector<std::int64_t> shape;
};

// How the loss of a training run is made: the model's scalar output if it returns exactly one
// (auto), the sum of every floating output (sum), or the model's scalar output, required (output).
enum class LossKind { automatic, sum, output };
const char* to_string(LossKind loss);  // auto | sum | output
std::optional<LossKind> loss_kind_from_string(const std::string& text);
inline constexpr const char* kLossKindNames = "auto, sum, output";

inline constexpr int kDefaultLoaderEpochs = 2;
inline constexpr int kDefaultLoaderBatches = 10;
inline constexpr int kMaxLoaderEpochs = 1000;
inline constexpr int kMaxLoaderBatches = 100000;

struct ModelSpec {
  std::string name;                // the cells' probe is "model.<name>"
  std::string path;                // absolute
  std::string inputs_file;         // torch.save of a tensor, tuple, list or dict of tensors; absolute
  std::vector<ModelInput> inputs;  // generated from the seed, in argument order, when there is no file
  bool train = false;              // forward, loss, backward; else forward only (inference)
  int steps = 0;                   // train: plain SGD steps, each followed by the next forward and backward
  double learning_rate = 0.01;
  LossKind loss = LossKind::automatic;
  bool per_op = true;  // digest every dispatcher op's inputs and outputs
  // A Python callable (`repro-audit py`): "module:callable" or "file.py:callable", run by `python`
  // through the runner the tool ships (python_runner/python_runner.py). Empty for TorchScript and AOTInductor.
  std::string callable;
  std::string python;         // the interpreter; absolute
  std::string search_path;    // put first on sys.path (the directory `py` ran in); absolute
  bool parameters = false;    // also digest the state's parameters and gradients after each run
  std::string compile_cache;  // an Inductor cache shared by every process; "" compiles afresh in each
  // A callable that makes a DataLoader (or any iterable of batches): each run iterates this many epochs
  // of at most this many batches each, digesting every batch (python_runner/python_loader.py).
  int loader_epochs = kDefaultLoaderEpochs;
  int loader_batches = kDefaultLoaderBatches;
};

inline bool is_python_model(const ModelSpec& model) { return !model.callable.empty(); }

// What is wrong with a callable's spelling ("module.path:name" or "file.py:name"); "" when nothing is.
std::string callable_problem(const std::string& callable);

inline constexpr const char* kModelProbePrefix = "model.";
inline constexpr const char* kPythonProbePrefix = "py.";
inline constexpr const char* kInputDTypeNames = "f32, f64, f16, bf16, i64, i32, bool";

// The bytes a generated input takes; nullopt when the count overflows 64 bits (no machine holds it).
std::optional<std::uint64_t> model_input_bytes(const ModelInput& input);

// What `model` may load, checked before anything is allocated: a model archive's records, summed
// uncompressed (a zip bomb of a few MB can unpack to many GB), and the inputs (generated from
// --input shapes, or an --inputs file). The defaults fit any model a workstation audits in full;
// `--max-model-bytes` and `--max-input-bytes` raise them.
struct ModelLimits {
  std::uint64_t model_bytes = std::uint64_t{8} << 30;
  std::uint64_t input_bytes = std::uint64_t{2} << 30;
};

std::string model_probe_name(const ModelSpec& model);  // "model.<name>", or "py.<name>" for a callable
std::string model_variant(const ModelSpec& model);     // forward | train | train.sgd<K> | call
bool is_model_probe(const std::string& probe);
// A name fit for a cell key, from a file name: "resnet18.pt" -> "resnet18".
std::string model_name_from_path(const std::string& path);
// The catalogue entry of a model: one variant, nothing documented (PyTorch promises nothing of it).
ProbeInfo model_probe_info(const ModelSpec& model);
// The catalogue with an entry for each model (a model's name must not repeat).
Catalogue catalogue_with_models(Catalogue catalogue, const std::vector<ModelSpec>& models);

// "x:f32[4,8]" or "f32[4,8]" (named input<i>); nullopt and `error` set when malformed.
std::optional<ModelInput> parse_model_input(const std::string& text, std::size_t index, std::string& error);
std::string to_string(const ModelInput& input);

void to_json(nlohmann::json& j, const ModelSpec& model);
void from_json(const nlohmann::json& j, ModelSpec& model);

}  // namespace repro_audit
