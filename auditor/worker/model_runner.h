#pragma once
// Loads a user's model (TorchScript file or AOTInductor package) and its inputs, and makes the run
// a model cell repeats: forward, or forward, loss, backward and optional SGD steps. Every run starts
// from the same parameters, buffers and inputs.
#include <string>

#include "config/model_spec.h"
#include "worker/probe.h"

namespace repro_audit {

enum class ModelFormat { torchscript, aoti_package };

// What the file is, from its archive entries; throws std::invalid_argument saying what it is not.
ModelFormat model_format(const std::string& path);

// Throws std::invalid_argument naming `option` when the file at `path` is larger than `limit` bytes,
// or is a zip archive whose records add up, uncompressed, to more: before anything reads them.
void check_model_file_size(const std::string& path, std::uint64_t limit, const std::string& what,
                           const std::string& option);

struct PreparedModel {
  RunFunction run;
  // Why per-op records cannot be made (an AOTInductor package runs compiled kernels); "" when they can.
  std::string per_op_unavailable;
};

// Throws std::invalid_argument for a file that is not a model, inputs that do not fit its forward,
// or options the format cannot do (training a package).
PreparedModel prepare_model(const ModelSpec& model, ProbeContext& context);

// Output names: "output" for one tensor, "output.0"... for a tuple or list, "output.<key>" for a
// dict; then, training, "loss", "grad.<parameter>", and per SGD step "params.step<k>" and, after
// the first, "loss.step<k>".
std::string step_loss_name(int step);
std::string step_params_name(int step);

}  // namespace repro_audit
