#pragma once
// A model's inputs: read from a file written by Python's torch.save (a tensor, or a tuple, list or
// dict of tensors), or generated from the seed by name, dtype and shape.
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "config/model_spec.h"
#include "probe/probe.h"

namespace repro_audit {

struct ModelInputs {
  std::vector<c10::IValue> positional;
  std::vector<std::pair<std::string, c10::IValue>> named;  // from a dict: matched to forward's argument names
  std::string described;                                   // "x: Float[4, 8]", for messages
};

// Throws std::invalid_argument naming the file when it is not one torch.save wrote, or holds
// something other than tensors.
ModelInputs load_model_inputs(const ModelSpec& model, ProbeContext& context);

// Fresh copies, so a model that writes into its inputs cannot change the next run's.
std::vector<c10::IValue> copied(const std::vector<c10::IValue>& values);

}  // namespace repro_audit
