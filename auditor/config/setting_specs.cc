// The table of settings: every axis an audit can set, what it accepts, how it is applied and pinned.
#include <fmt/format.h>

#include "config/settings.h"

namespace repro_audit {
namespace {

std::string python_bool(const std::string& value) { return value == "true" ? "True" : "False"; }

}  // namespace

// In name order, like the cell keys (plan/cell_key.h), though keys do not depend on this order.
const std::vector<SettingSpec>& setting_specs() {
  using S = SettingScope;
  using D = DeterminismRole;
  static const std::vector<SettingSpec> specs = {
      {.name = "allow_tf32",
       .values = {"false", "true"},
       .default_value = "false",
       .scope = S::in_process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "TF32 in cuBLAS matmuls and cuDNN convolutions",
       .python =
           [](const std::string& v) {
             return fmt::format(
                 "torch.backends.cuda.matmul.allow_tf32 = {0}\n    torch.backends.cudnn.allow_tf32 = {0}",
                 python_bool(v));
           }},
      // `py` cells only: Inductor's autotuning switches (max_autotune and its pointwise and GEMM parts,
      // coordinate_descent_tuning): kernels chosen by timing them, which can differ from compile to compile.
      {.name = "autotune",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "Inductor's autotuning (max_autotune, max_autotune_pointwise, max_autotune_gemm, "
               "coordinate_descent_tuning) for a py cell's compiled callable (py cells only)",
       .python = [](const std::string& v) { return "pass  # autotune: " + v + " (py cells)"; },
       .py_cells_only = true,
       .compiled_only = true},
      // ATen picks its CPU kernels once, when it first dispatches: only a fresh process can change it.
      // "inherit" leaves the user's ATEN_CPU_CAPABILITY as it is (that is how a user reproduces an older
      // host's bits); "native" removes it, so ATen takes the best level this CPU runs.
      // `py` cells only: torch.compile of the user's callable, in a process of its own per value, so each
      // process compiles afresh and compile-to-compile differences show as cross-process divergence.
      {.name = "compile",
       .values = {"off", "default", "reduce-overhead", "max-autotune"},
       .default_value = "off",
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "torch.compile mode of a py cell's callable (py cells only)",
       .python = [](const std::string& v) { return "pass  # torch.compile mode: " + v + " (py cells)"; },
       .py_cells_only = true},
      {.name = "cpu_capability",
       .values = {kInherit, "native", "default", "avx2", "avx512"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = false,
       .help = "ATEN_CPU_CAPABILITY: the vectorised CPU kernels ATen dispatches to (a level the CPU cannot run "
               "is skipped)",
       .environment_variable = "ATEN_CPU_CAPABILITY",
       .portability = PortabilityRole::isa,
       .removed_by = "native"},
      // cuBLAS reads the variable once, when it starts: only a fresh process can change it.
      {.name = "cublas_workspace_config",
       .values = {kUnset, ":4096:8", ":16:8"},
       .default_value = kUnset,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "CUBLAS_WORKSPACE_CONFIG in the worker's environment before cuBLAS starts",
       .environment_variable = "CUBLAS_WORKSPACE_CONFIG",
       .determinism = D::prerequisite},
      {.name = "cudnn_benchmark",
       .values = {"false", "true"},
       .default_value = "false",
       .scope = S::in_process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "cudnn.benchmark: time candidate algorithms and keep the fastest",
       .python = [](const std::string& v) { return "torch.backends.cudnn.benchmark = " + python_bool(v); }},
      {.name = "cudnn_deterministic",
       .values = {"false", "true"},
       .default_value = "false",
       .scope = S::in_process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "cudnn.deterministic: only deterministic convolution algorithms",
       .python = [](const std::string& v) { return "torch.backends.cudnn.deterministic = " + python_bool(v); }},
      {.name = "cudnn_enabled",
       .values = {"true", "false"},
       .default_value = "true",
       .scope = S::in_process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "cudnn.enabled",
       .python = [](const std::string& v) { return "torch.backends.cudnn.enabled = " + python_bool(v); }},
      {.name = "deterministic_algorithms",
       .values = {"off", "on", "warn"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "torch.use_deterministic_algorithms (warn = warn_only=True)",
       .determinism = D::mode,
       .python =
           [](const std::string& v) {
             return fmt::format("torch.use_deterministic_algorithms({}, warn_only={})", v == "off" ? "False" : "True",
                                v == "warn" ? "True" : "False");
           }},
      {.name = "fill_uninitialized_memory",
       .values = {"true", "false"},
       .default_value = "true",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "fill new uninitialised memory with NaN when deterministic algorithms are on",
       .python =
           [](const std::string& v) {
             return "torch.utils.deterministic.fill_uninitialized_memory = " + python_bool(v);
           }},
      // Inductor's batch-invariant mode (torch 2.14 and later): each sample's kernel is the same whatever
      // the batch size; it implies Inductor's deterministic mode. `py` cells only.
      {.name = "inductor_batch_invariant",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "torch._inductor.config.batch_invariant for a py cell's compiled callable (py cells only)",
       .python = [](const std::string& v) { return "pass  # inductor_batch_invariant: " + v + " (py cells)"; },
       .py_cells_only = true,
       .compiled_only = true},
      // Inductor's deterministic mode (torch 2.8 and later): no atomics in its scatter lowerings, no
      // autotuning by timing; `py` cells only, where the installed torch has it.
      {.name = "inductor_deterministic",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "torch._inductor.config.deterministic for a py cell's compiled callable (py cells only)",
       .python = [](const std::string& v) -> std::string {
         // No `import` statement: it would make `torch` a local name of the function it lands in. Off is
         // Inductor's default, and importing Inductor costs a probe's script a second and a half.
         if (v != "on") return "pass  # inductor_deterministic: off";
         return "__import__(\"torch._inductor.config\"); torch._inductor.config.deterministic = True";
       },
       .py_cells_only = true,
       .compiled_only = true},
      // `py` cells that make a DataLoader only: the recipe's lines for a loader, applied to the user's loader
      // (python_runner/python_loader.py), and its worker count as an axis. Other py cells ignore them.
      {.name = "loader_generator",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "a DataLoader cell's loader gets generator=torch.Generator().manual_seed(seed), for its shuffling "
               "and its workers' seeds (py cells only)",
       .python = [](const std::string& v) { return "pass  # loader_generator: " + v + " (py cells)"; },
       .py_cells_only = true},
      {.name = "loader_seed_workers",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "a DataLoader cell's workers seed NumPy and random from torch.initial_seed() (the documented "
               "worker_init_fn; py cells only)",
       .python = [](const std::string& v) { return "pass  # loader_seed_workers: " + v + " (py cells)"; },
       .py_cells_only = true},
      {.name = "loader_workers",
       .values = {kInherit, "0", "1", "2", "4", "8"},
       .default_value = kInherit,
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "a DataLoader cell's num_workers (inherit: the loader's own; py cells only)",
       .python = [](const std::string& v) { return "pass  # loader_workers: " + v + " (py cells)"; },
       .py_cells_only = true},
      // MKL reads MKL_CBWR when it starts. COMPATIBLE gives the same bits on every x86 CPU MKL runs on;
      // a branch the CPU lacks makes MKL fall back, so the sweeps use unset and COMPATIBLE only.
      {.name = "mkl_cbwr",
       .values = {kInherit, kUnset, "COMPATIBLE", "AUTO", "SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_E1"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = false,
       .help = "MKL_CBWR: MKL's conditional numerical reproducibility branch (f32 matmuls)",
       .environment_variable = "MKL_CBWR",
       .portability = PortabilityRole::isa},
      // MKL reads MKL_ENABLE_INSTRUCTIONS when it starts: the newest instruction set its dispatcher may
      // use (a lower one than the CPU has makes it take an older host's code path; a higher one is
      // ignored). Unlike MKL_CBWR it promises no bits, it caps the dispatch.
      {.name = "mkl_enable_instructions",
       .values = {kInherit, kUnset, "SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_E1", "AVX512_E2", "AVX512_E3",
                  "AVX512_E4"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = false,
       .help = "MKL_ENABLE_INSTRUCTIONS: the newest instruction set MKL's dispatcher may use",
       .environment_variable = "MKL_ENABLE_INSTRUCTIONS",
       .portability = PortabilityRole::isa},
      // Environment variables NCCL reads when a communicator starts; CUDA only, never run on a machine
      // without GPUs. NCCL gives the same bits for the same ranks and the same choices; these change them.
      {.name = "nccl_algo",
       .values = {kInherit, "Ring", "Tree", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "NCCL_ALGO: the collective algorithm NCCL may use",
       .environment_variable = "NCCL_ALGO"},
      {.name = "nccl_max_channels",
       .values = {kInherit, "1", "2", "4", "8", "16", "32"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "NCCL_MAX_NCHANNELS: how many channels (rings) split a collective, at most",
       .environment_variable = "NCCL_MAX_NCHANNELS"},
      {.name = "nccl_min_channels",
       .values = {kInherit, "1", "2", "4", "8", "16", "32"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "NCCL_MIN_NCHANNELS: how many channels (rings) split a collective, at least",
       .environment_variable = "NCCL_MIN_NCHANNELS"},
      {.name = "nccl_nvls",
       .values = {kInherit, "0", "1"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "NCCL_NVLS_ENABLE: NVLink SHARP reductions in the switch",
       .environment_variable = "NCCL_NVLS_ENABLE"},
      {.name = "nccl_proto",
       .values = {kInherit, "LL", "LL128", "Simple"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = false,
       .on_cuda = true,
       .help = "NCCL_PROTO: the protocol NCCL may use",
       .environment_variable = "NCCL_PROTO"},
      // oneDNN (convolutions, bf16 matmuls on the CPU) reads ONEDNN_MAX_CPU_ISA when it starts: the newest
      // ISA its JIT may generate code for. Set to an older host's ISA it takes that host's kernels, and
      // gives its bits (the same oneDNN version and threads).
      {.name = "onednn_max_cpu_isa",
       .values = {kInherit, kUnset, "SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE",
                  "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX10_1_512", "AVX512_CORE_FP16", "AVX10_1_512_AMX",
                  "AVX512_CORE_AMX", "AVX10_1_512_AMX_FP16", "AVX512_CORE_AMX_FP16", "ALL"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = false,
       .help = "ONEDNN_MAX_CPU_ISA: the newest instruction set oneDNN's JIT may generate code for",
       .environment_variable = "ONEDNN_MAX_CPU_ISA",
       .portability = PortabilityRole::isa},
      // `py` cells only: the string hash seed of the workers' interpreters, which fixes the order of sets and
      // dicts of strings. "inherit" keeps the user's PYTHONHASHSEED (unset: each process draws its own).
      {.name = "python_hash_seed",
       .values = {kInherit, "0", "random"},
       .default_value = kInherit,
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "PYTHONHASHSEED of a py cell's interpreter: 0 fixes the order of sets of strings in every process "
               "(py cells only)",
       .environment_variable = "PYTHONHASHSEED",
       .py_cells_only = true},
      // A collective probe's cells run with this many cooperating processes (2 or more); every other
      // probe runs alone (1). Not a thing a script can set: a collective has no Python form.
      {.name = "ranks",
       .values = {},
       .default_value = "1",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "ranks of a collective cell (collective probes only; 2 ranks alone cannot show a reordering)",
       .portability = PortabilityRole::ranks,
       .minimum = 1,
       .maximum = 24},
      // `py` cells only: the randomness half of PyTorch's reproducibility recipe, each line a setting. The
      // runner seeds the global generator with the cell's seed before the factory runs; off leaves what the
      // user's code does.
      {.name = "seed_numpy",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "np.random.seed(seed) before a py cell's factory runs (py cells only)",
       .python = [](const std::string& v) { return "pass  # seed_numpy: " + v + " (py cells)"; },
       .py_cells_only = true},
      {.name = "seed_random",
       .values = {"off", "on"},
       .default_value = "off",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "random.seed(seed) before a py cell's factory runs (py cells only)",
       .python = [](const std::string& v) { return "pass  # seed_random: " + v + " (py cells)"; },
       .py_cells_only = true},
      {.name = "seed",
       .values = {},
       .default_value = "0",
       .scope = S::in_process,
       .on_cpu = true,
       .on_cuda = true,
       .help = "torch.manual_seed before every run"},
      // 0 is no thread pool at all, and more threads than any machine has cores is a typo that would only
      // surface as a worker failing to start them.
      {.name = "threads",
       .values = {},
       .default_value = "2",
       .scope = S::process,
       .on_cpu = true,
       .on_cuda = false,
       .help = "intra-op threads (at::set_num_threads)",
       .portability = PortabilityRole::threads,
       .minimum = 1,
       .maximum = 1024,
       .python = [](const std::string& v) { return "torch.set_num_threads(" + v + ")"; }},
  };
  return specs;
}

}  // namespace repro_audit
