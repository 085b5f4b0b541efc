// scaled_dot_product_attention backward, run to run, per backend: flash, memory-efficient, cuDNN and math,
// each the only one enabled (torch.nn.attention.sdpa_kernel's flags: Context::setSDPUseFlash and its
// siblings), causal or not, with an additive mask or none, float32, float16 and bfloat16. A backend that
// cannot take the inputs on this build or device (flash with a mask or float32 on CUDA, cuDNN without its
// library) is `unsupported` with the reasons ATen's dispatch gives (at::_fused_sdp_choice).
// On CUDA the flash and memory-efficient backward kernels add each key block's share of the query's
// gradient with atomics (attention_backward.cu: _flash_attention_backward passes deterministic=false,
// _efficient_attention_backward sets num_splits_key = ceil_div(num_keys, kBlockSizeJ)); under
// deterministic algorithms both switch to one ordered pass and warn under warn_only ("... defaults to a
// non-deterministic algorithm"). torch.use_deterministic_algorithms lists neither, nor cuDNN's kernel.
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/autograd/autograd.h>

#include "probe/probe.h"

namespace repro_audit::sdpa_backward_probe {
namespace {

struct Backend {
  const char* name;
  at::SDPBackend backend;
};

constexpr Backend kBackends[] = {{"flash", at::SDPBackend::flash_attention},
                                 {"efficient", at::SDPBackend::efficient_attention},
                                 {"cudnn", at::SDPBackend::cudnn_attention},
                                 {"math", at::SDPBackend::math}};

const Backend& backend_named(const std::string& name) {
  for (const auto& backend : kBackends)
    if (name == backend.name) return backend;
  throw std::invalid_argument("no SDPA backend named " + name);
}

// Only `only` enabled while it lives, the flags restored after (sdpa_kernel's context manager in C++).
class BackendSelection {
 public:
  explicit BackendSelection(at::SDPBackend only) {
    auto& context = at::globalContext();
    saved_ = {context.userEnabledFlashSDP(), context.userEnabledMemEfficientSDP(), context.userEnabledCuDNNSDP(),
              context.userEnabledMathSDP(), context.userEnabledOverrideableSDP()};
    set({only == at::SDPBackend::flash_attention, only == at::SDPBackend::efficient_attention,
         only == at::SDPBackend::cudnn_attention, only == at::SDPBackend::math, false});
  }
  ~BackendSelection() { set(saved_); }
  BackendSelection(const BackendSelection&) = delete;
  BackendSelection& operator=(const BackendSelection&) = delete;

 private:
  static void set(const std::array<bool, 5>& enabled) {
    auto& context = at::globalContext();
    context.setSDPUseFlash(enabled[0]);
    context.setSDPUseMemEfficient(enabled[1]);
    context.setSDPUseCuDNN(enabled[2]);
    context.setSDPUseMath(enabled[3]);
    context.setSDPUseOverrideable(enabled[4]);
  }
  std::array<bool, 5> saved_{};
};

// ATen says why a fused kernel cannot run through warnings (sdp_utils' check_* functions) before it raises.
class CollectedWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    const std::string text = warning.msg();
    reasons.push_back(text.substr(0, text.find('\n')));
  }
  std::vector<std::string> reasons;
};

// Throws Unsupported, with ATen's reasons, unless dispatch picks `wanted` for these inputs on this device.
void require_backend(const Backend& wanted, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     const std::optional<at::Tensor>& mask, bool causal) {
  BackendSelection selection(wanted.backend);
  CollectedWarnings warnings;
  std::int64_t chosen = -1;
  {
    c10::WarningUtils::WarningHandlerGuard guard(&warnings);
    try {
      chosen = at::_fused_sdp_choice(query, key, value, mask, 0.0, causal);
    } catch (const c10::Error& error) {
      const std::string text = error.what_without_backtrace();
      warnings.reasons.push_back(text.substr(0, text.find('\n')));
    }
  }
  if (chosen == static_cast<std::int64_t>(wanted.backend)) return;
  throw Unsupported(fmt::format("the {} backend cannot take these inputs on this build and device: {}", wanted.name,
                                fmt::join(warnings.reasons, "; ")));
}

// CPU: 2 x 4 heads of 256 x 64. CUDA: 4 x 8 heads of 1024 x 64: eight or more key blocks (flash's kBlockN and
// the memory-efficient kernel's kBlockSizeJ are 64 or 128 at head dim 64), so each element of the query's
// gradient takes eight or more atomic adds; 32 heads of 1024 queries keep every SM busy. Unverified on a GPU.
std::vector<std::int64_t> shape_of(bool on_cuda) {
  return on_cuda ? std::vector<std::int64_t>{4, 8, 1024, 64} : std::vector<std::int64_t>{2, 4, 256, 64};
}

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto& backend = backend_named(context.parameter("backend"));
  const auto& masking = context.parameter("mask");
  const bool causal = masking == "causal";
  const auto sizes = shape_of(context.on_cuda());
  const auto query = context.input("query", requiring_grad(context.randn(sizes, dtype)));
  const auto key = context.input("key", requiring_grad(context.randn(sizes, dtype)));
  const auto value = context.input("value", requiring_grad(context.randn(sizes, dtype)));
  const auto length = sizes[2];
  std::optional<at::Tensor> mask;
  if (masking == "mask") mask = context.input("attn_mask", context.randn({1, 1, length, length}, dtype));
  const auto grad_output = context.input("grad_output", context.randn(sizes, dtype));
  if (context.runs_here()) require_backend(backend, query, key, value, mask, causal);
  return [=] {
    at::Tensor output;
    {
      BackendSelection selection(backend.backend);
      output = at::scaled_dot_product_attention(query, key, value, mask, 0.0, causal);
    }
    const auto grads = torch::autograd::grad({output}, {query, key, value}, {grad_output});
    return Outputs{
        {"output", output.detach()}, {"grad_query", grads[0]}, {"grad_key", grads[1]}, {"grad_value", grads[2]}};
  };
}

// Deterministic algorithms switch both to an ordered pass; warn_only keeps the atomic one and warns once.
const std::map<std::string, Documented> kSwitches = {{"cpu", Documented::deterministic},
                                                     {"cuda", Documented::alternative_unless_warn_only}};

const char* dtype_name(DType dtype) { return dtype == DType::f32 ? "f32" : dtype == DType::f16 ? "f16" : "bf16"; }

// The dtype of a backend's variants in the CUDA default suite: bf16 where the fused kernels take half
// precision only (flash, cuDNN) and for the math reference beside them; f32 for the memory-efficient
// kernel, whose f32 backward raced in every run on an H200 where its f16 one sometimes agreed.
DType default_dtype(const std::string& backend) { return backend == "efficient" ? DType::f32 : DType::bf16; }

// Named "<backend>[-causal|-mask]-<dtype>", e.g. flash-causal-bf16.
Variant attention(const Backend& backend, const std::string& masking, DType dtype) {
  const std::string name = backend.name;
  auto variant = Variant(fmt::format("{}{}-{}", name, masking == "none" ? "" : "-" + masking, dtype_name(dtype)),
                         fmt::format("{} backend, {}, {}", name,
                                     masking == "none"     ? "no mask"
                                     : masking == "causal" ? "causal"
                                                           : "additive mask",
                                     dtype_name(dtype)))
                     .dtype(dtype)
                     .parameter("backend", name)
                     .parameter("mask", masking);
  const std::string on_cpu =
      "its CPU kernels (flash and math) measured the same bits at 1 and 2 threads and from run to run: run it here "
      "with --probe sdpa_backward";
  // On an H200 (torch 2.11.0, cuDNN 9.19) the 36 variants took 32 s of an 85-s default CUDA audit: one dtype
  // per backend and mask stands for the others there (flash's and cuDNN's f16 and bf16 raced alike; the
  // memory-efficient f32 backward raced with every mask, its f16 and bf16 with some).
  if (dtype == default_dtype(name))
    variant.default_suite_on({"cuda"}, on_cpu);
  else
    variant.default_suite_nowhere(
        on_cpu + fmt::format("; on CUDA its {} variants stand for the other dtypes (on an H200 the 36 variants "
                             "took 32 s of an 85-s default audit, and flash's and cuDNN's f16 and bf16 raced alike; "
                             "the memory-efficient f32 backward raced with every mask, its f16 and bf16 with some): "
                             "run them with --probe sdpa_backward",
                             dtype_name(default_dtype(name))));
  if (name == "efficient" || name == "cudnn")
    variant.cuda_only(
        fmt::format("ATen has no {} attention kernel for the CPU", name == "cudnn" ? "cuDNN" : "memory-efficient"));
  if (name == "flash" || name == "efficient") variant.documented(kSwitches);
  // cuDNN's attention backward: nothing documented; the matrix says what it does.
  if (name == "cudnn") variant.documented({{"cuda", Documented::unknown}});
  // The math backend is matmuls and softmax: cuBLAS's rule on CUDA up to 2.9.
  if (name == "math")
    variant.documented_before("2.10", "cuda", Documented::cublas_workspace,
                              "torch.use_deterministic_algorithms required CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 "
                              "for torch.mm, mv and bmm on CUDA up to 2.9; 2.10 removed the check and the paragraph "
                              "(pytorch#161749)");
  return variant;
}

ProbeBuilder with_variants(ProbeBuilder probe) {
  for (const auto& backend : kBackends)
    for (const char* masking : {"none", "causal", "mask"})
      for (DType dtype : {DType::f32, DType::f16, DType::bf16}) probe.variant(attention(backend, masking, dtype));
  return probe;
}

const bool registered = register_probe(
    with_variants(ProbeBuilder("sdpa_backward"))
        .weight(15)
        .describe("scaled_dot_product_attention forward and backward per backend (flash, memory-efficient, cuDNN, "
                  "math): 2 x 4 heads of 256 x 64 (CUDA: 4 x 8 heads of 1024 x 64)")
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::deterministic}})
        .accumulates("grad_query", "grad_output")
        .prepare(prepare)
        .python(R"(
            from torch.nn.attention import SDPBackend, sdpa_kernel
            chosen = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                      "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}[backend]
            for tensor in (query, key, value):
                tensor.requires_grad_()
            with sdpa_kernel(chosen):
                output = F.scaled_dot_product_attention(query, key, value,
                                                        attn_mask=attn_mask if mask == "mask" else None,
                                                        is_causal=mask == "causal")
            grads = torch.autograd.grad([output], [query, key, value], [grad_output])
            return {"output": output.detach(), "grad_query": grads[0], "grad_key": grads[1], "grad_value": grads[2]}
        )"));

}  // namespace
}  // namespace repro_audit::sdpa_backward_probe
