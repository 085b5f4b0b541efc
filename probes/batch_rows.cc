// Batch invariance of row-wise ops: softmax, log_softmax, layer_norm, rms_norm, and row sum and
// mean over 4096 columns. Each row is computed on its own in principle; whether the kernel's
// vectorisation or threading split depends on the batch is what this measures.
#include "probe/invariance.h"

namespace repro_audit::batch_rows_probe {
namespace {

constexpr std::int64_t kColumns = 4096;

using RowOp = at::Tensor (*)(const at::Tensor&);

at::Tensor softmax(const at::Tensor& x) { return at::softmax(x, -1); }
at::Tensor log_softmax(const at::Tensor& x) { return at::log_softmax(x, -1); }
at::Tensor layer_norm(const at::Tensor& x) { return at::layer_norm(x, {kColumns}); }
at::Tensor rms_norm(const at::Tensor& x) { return at::rms_norm(x, {kColumns}); }
at::Tensor row_sum(const at::Tensor& x) { return x.sum(-1); }
at::Tensor row_mean(const at::Tensor& x) { return x.mean(-1); }

template <RowOp op>
RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto sizes = default_batch_sizes();
  const auto anchor = context.input("anchor", context.randn({1, kColumns}, dtype));
  const auto fillers = context.input("fillers", context.randn({sizes.back() - 1, kColumns}, dtype));
  return batch_invariance(
      {anchor}, {fillers}, [](const std::vector<at::Tensor>& x) { return op(x[0]); }, sizes);
}

// `python`: the op on rows `x` in Python.
template <RowOp op>
bool register_row_probe(const char* name, const char* what, const std::string& python) {
  return register_probe(
      invariance_probe(name, std::string("one row of ") + what + " (4096 columns) alone and in batches",
                       Invariance::batch, prepare<op>)
          .python("return batch_invariance([anchor], [fillers], lambda x: " + python + ", default_batch_sizes())"));
}

const bool registered =
    register_row_probe<softmax>("batch.softmax", "softmax", "torch.softmax(x[0], -1)") &&
    register_row_probe<log_softmax>("batch.log_softmax", "log_softmax", "torch.log_softmax(x[0], -1)") &&
    register_row_probe<layer_norm>("batch.layer_norm", "layer_norm", "F.layer_norm(x[0], (4096,))") &&
    register_row_probe<rms_norm>("batch.rms_norm", "rms_norm", "F.rms_norm(x[0], (4096,))") &&
    register_row_probe<row_sum>("batch.sum", "a row sum", "x[0].sum(-1)") &&
    register_row_probe<row_mean>("batch.mean", "a row mean", "x[0].mean(-1)");

}  // namespace
}  // namespace repro_audit::batch_rows_probe
