#pragma once
// A model audit's cell (`repro-audit model`): the user's TorchScript module or AOTInductor package
// run again and again on its inputs, forward or training with SGD steps; its outputs and gradients
// digested one by one, its dispatcher ops recorded, and where a divergence starts named (the origin
// op). Its runs are its timings; what PyTorch documents for it is unknown.
#include "kind/cell_kind.h"

namespace repro_audit {

const CellKind& model_kind();

}  // namespace repro_audit
