// ctc_loss backward: 16 sequences of 50 steps over 20 classes (CUDA: a shape of its own, below). CUDA documents CTCLoss
// backward as raising under deterministic algorithms; the cuDNN path (float32, int32 targets on the CPU, full input
// lengths) has been reported not to raise, which is what its own variant checks.
#include "probe/probe.h"

namespace repro_audit::ctc_loss_probe {
namespace {

RunFunction prepare(ProbeContext& context) {
  const bool cudnn = context.parameter("path") == "cudnn";
  if (cudnn && !context.on_cuda()) throw Unsupported("the cuDNN path exists only on CUDA");
  const auto dtype = context.dtype();
  // CUDA's backward (LossCTC.cu) takes its atomicAdd path only for a "large" problem,
  // 2 * steps + 2.4 * batch + 0.2 * classes > 450; below that a serial loop per (step, class) collects
  // the gradient, which is why 50 steps of 16 sequences (142) never diverged in 62 runs on a GPU. On
  // the atomic path every label position adds into grad[step, sequence, its class]: few classes and
  // long targets make them collide. So on CUDA: 512 steps, 64 sequences, 4 labels, targets of 100 to
  // 200 (each label about 40 times per target). Unverified on a GPU.
  const bool cuda = context.on_cuda();
  const std::int64_t steps = cuda ? 512 : 50, batch = cuda ? 64 : 16, classes = cuda ? 5 : 20;
  const std::int64_t min_target = cuda ? 100 : 10, max_target = cuda ? 200 : 30;
  // Portable inputs: log-probabilities drawn directly (negative, not normalised: ctc_loss takes any
  // log-space values), so no exp or log of this host's makes them.
  const auto logits = context.randn({steps, batch, classes}, dtype);
  const auto log_probs = context.input(
      "log_probs",
      requiring_grad(context.scheme() == InputScheme::portable ? logits.abs().neg() : logits.log_softmax(2)));
  std::vector<std::int64_t> input_lengths(batch, steps), target_lengths(batch);
  const auto lengths = context.randint(min_target, max_target + 1, {batch}).cpu();
  for (std::int64_t i = 0; i < batch; ++i) target_lengths[i] = lengths[i].item<std::int64_t>();
  // Classes 1..C-1; 0 is the blank.
  const auto padded = context.randint(1, classes, {batch, max_target}).cpu();
  at::Tensor targets;
  if (cudnn) {
    std::vector<at::Tensor> pieces;
    for (std::int64_t i = 0; i < batch; ++i) pieces.push_back(padded[i].slice(0, 0, target_lengths[i]));
    targets = at::cat(pieces).to(at::kInt);  // the cuDNN path wants concatenated int32 targets on the CPU
  } else {
    targets = context.to_device(padded);
  }
  context.input("input_lengths", at::tensor(input_lengths));
  context.input("target_lengths", at::tensor(target_lengths));
  context.input("targets", targets);
  const auto grad_output = context.to_device(at::ones({}, at::TensorOptions().dtype(dtype)));
  return [=] {
    const auto loss = at::ctc_loss(log_probs, targets, input_lengths, target_lengths, /*blank=*/0, at::Reduction::Mean,
                                   /*zero_infinity=*/false);
    return Outputs{{"loss", loss.detach()}, {"grad_log_probs", gradient(loss, log_probs, grad_output)}};
  };
}

const bool registered = register_probe(
    ProbeBuilder("ctc_loss")
        .weight(1.5)
        .describe("ctc_loss forward and backward: 16 sequences of 50 steps, 20 classes (CUDA: 64 of 512, 5 classes)")
        .variant(Variant(DType::f32, "float32, native kernel").parameter("path", "native"))
        .variant(Variant(DType::f64, "float64, native kernel").parameter("path", "native"))
        .variant(Variant("cudnn-f32", "float32, cuDNN path")
                     .dtype(DType::f32)
                     .parameter("path", "cudnn")
                     .cuda_only("the cuDNN path exists only on CUDA"))
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::raises_under_strict}})
        .accumulation_unchecked("its gradient sums over a target's label positions inside one kernel (atomicAdd on "
                                "CUDA); no input of the probe orders that sum")
        .prepare(prepare)
        .python(R"(
                           log_probs.requires_grad_()
                           loss = F.ctc_loss(log_probs, targets.cpu() if path == "cudnn" else targets,
                                             input_lengths.tolist(), target_lengths.tolist(), blank=0,
                                             reduction="mean", zero_infinity=False)
                           grad = gradient(loss, log_probs, torch.ones((), dtype=dtype, device=device))
                           return {"loss": loss.detach(), "grad_log_probs": grad}
                       )"));

}  // namespace
}  // namespace repro_audit::ctc_loss_probe
