#pragma once
// Loads a user's model (TorchScript file or AOTInductor package) and its inputs, and makes the run
// a model cell repeats: forward, or forward, loss, backward and optional SGD steps. Every run starts
// from the same parameters, buffers and inputs.
#include <functional>
#include <string>

#include "config/model_spec.h"
#include "models/model_checks.h"
#include "probe/probe.h"

namespace repro_audit {

struct PreparedModel {
  RunFunction run;
  // Puts the model's state back as loaded and makes the next run's inputs, so that the run that follows
  // does only the model's work (its timing holds no restore); a run not preceded by it does both itself.
  // Empty where there is nothing to put back.
  std::function<void()> restore;
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
