#pragma once
// Crafted reports with fixed values (no clocks, no plan), shared by the printer goldens and the gate
// tests: a change to the plan or the settings never churns them.
#include <string>
#include <vector>

#include "common/user_error.h"
#include "compare/baseline.h"
#include "report/report.h"

namespace repro_audit::testing {

// A version-2 fingerprint of a CPU host with a CUDA build of torch and no driver.
inline nlohmann::json sample_environment() {
  using nlohmann::json;
  return {{"fingerprint", 2},
          {"tool_version", "0.1.0"},
          {"torch", "2.14.1"},
          {"torch_git", "5c48869e4b4cd8a6bfd5cd3fb9e2e8e01a2f6b2c"},
          {"torch_cuda_build", true},
          {"cpu", "AMD EPYC 7B13 64-Core Processor"},
          {"cpu_vendor", "AuthenticAMD"},
          {"cpu_family", 25},
          {"cpu_model", 1},
          {"cpu_stepping", 1},
          {"cpu_flags", json::array({"avx", "avx2", "f16c", "fma", "sse4_1", "sse4_2"})},
          {"aten_cpu_capability", "AVX2"},
          {"aten_cpu_capabilities", json::array({"default", "avx2"})},
          {"blas", "mkl"},
          {"mkl", "2024.2-Product Build 20240605"},
          {"onednn", "3.12.0 (80afa71049cd)"},
          {"openmp", "201511"},
          {"logical_cpus", 2},
          {"threads", 2},
          {"interop_threads", 2},
          {"numerics_environment", {{"OMP_NUM_THREADS", "2"}}},
          {"os", "Linux 6.1.0"},
          {"machine", "x86_64"},
          {"cuda",
           {{"compiled_runtime", 13000},
            {"runtime", 13000},
            {"driver", 0},
            {"cudnn", 92400},
            {"available", false},
            {"reason", "CUDA driver version is insufficient for CUDA runtime version"},
            {"devices", json::array()},
            {"nvml_unavailable", "libnvidia-ml.so.1: cannot open shared object file"}}},
          {"sources",
           {{"cpu_flags", "/proc/cpuinfo (flags)"},
            {"aten_cpu_capability", "at::native::get_cpu_capability()"},
            {"mkl", "at::show_config()"}}}};
}

inline Timing timing(std::int64_t median, std::int64_t p10, std::int64_t p90, int samples = 10) {
  return {median, p10, p90, samples};
}

// A cell with a verdict; `column` is the flag-set label, also the settings part of the key.
inline CellReport cell(const std::string& probe, const std::string& variant, const std::string& column,
                       VerdictKind kind, const std::string& digest = "", const Timing& time = {}) {
  CellReport report;
  const bool strict = column.rfind("strict", 0) == 0;
  report.cell.probe = probe;
  report.cell.variant = variant;
  report.cell.device = "cpu";
  report.cell.label = column;
  report.cell.settings = {{"deterministic_algorithms", strict ? "on" : "off"}, {"seed", "0"}, {"threads", "1"}};
  report.cell.key = cell_key(probe, variant, "cpu", report.cell.settings);
  report.verdict.kind = kind;
  report.verdict.digest = digest;
  report.verdict.digests_agree = !digest.empty();
  report.verdict.timing = time;
  report.verdict.runs = 6;
  report.verdict.processes = 2;
  report.verdict.distinct_digests = digest.empty() ? 0 : 1;
  report.documented = "deterministic";
  return report;
}

inline Report report_of(std::vector<CellReport> cells) {
  Report report;
  report.tool_version = "0.1.0";
  report.environment = sample_environment();
  report.config = {{"fail_on", "contradiction"}, {"input_scheme", 2}};
  report.device = "cpu";
  report.columns = {"default threads=1", "strict threads=1"};
  report.cells = std::move(cells);
  report.portability = find_portability(report.cells);
  report.duration_seconds = 12.5;
  return report;
}

inline ProcessObservation traced_process(int index, const std::string& digest, const std::string& kernel_digest,
                                         const std::vector<std::string>& kernel_names, std::int64_t time) {
  ProcessObservation observation;
  observation.process = index;
  observation.runs.push_back({digest, {{"out", digest}}, true, 0, kernel_digest});
  observation.runs.push_back({digest, {{"out", digest}}, false, time, kernel_digest});
  observation.runs.push_back({digest, {{"out", digest}}, false, time + 100, kernel_digest});
  std::vector<KernelRecord> kernels;
  for (const auto& name : kernel_names) kernels.push_back({name, "", ""});
  observation.kernel_sequences.push_back({kernel_digest, kernels});
  observation.input_digest = "5eed5eed5eed5eed5eed5eed5eed5eed";
  return observation;
}

// Gives a cell an agreed kernel sequence as a worker records it: the digest in the verdict, the
// records in the sequences of both processes.
inline void set_kernels(CellReport& report, const std::string& kernel_digest,
                        const std::vector<std::string>& kernel_names) {
  report.verdict.kernel_digest = kernel_digest;
  report.observations = {
      traced_process(0, report.verdict.digest, kernel_digest, kernel_names, report.verdict.timing.median_ns),
      traced_process(1, report.verdict.digest, kernel_digest, kernel_names, report.verdict.timing.median_ns)};
}

// A cell of `column` with another thread count; "default" with 2 threads has every setting at its
// default (the key "probe/variant@cpu").
inline CellReport with_threads(CellReport report, const std::string& threads) {
  report.cell.settings["threads"] = threads;
  report.cell.key = cell_key(report.cell.probe, report.cell.variant, "cpu", report.cell.settings);
  return report;
}

// Library verbose records (trace/library_verbose.h) as an AVX2 host and an AVX-512 host with DL Boost
// write them for one op: MKL's banner names the code path it dispatched to, oneDNN's its ISA.
inline std::string mkl_banner(bool avx512) {
  return std::string("mkl:oneMKL 2024.0 Update 2 for Intel(R) 64 architecture ") +
         (avx512 ? "Intel(R) Advanced Vector Extensions 512 (Intel(R) AVX-512) with support for Intel(R) Deep "
                   "Learning Boost (Intel(R) DL Boost), EVEX-encoded AES and Carry-Less Multiplication (CLMUL) "
                   "enabled processors, Lnx lp64 gnu_thread"
                 : "Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2) enabled processors, Lnx lp64 gnu_thread");
}

inline std::vector<std::string> mkl_sgemm_kernels(bool avx512) {
  return {mkl_banner(avx512), "mkl:SGEMM(N,N,512,512,512,*,*,512,*,512,*,*,512) CNR:OFF NThr:2"};
}

inline std::vector<std::string> onednn_convolution_kernels(bool avx512) {
  const std::string implementation = avx512 ? "jit:avx512_core" : "jit:avx2";
  return {std::string("onednn:oneDNN v3.12.0 ") +
              (avx512 ? "isa:Intel AVX-512 with Intel DL Boost and bfloat16 support" : "isa:Intel AVX2"),
          "onednn:convolution " + implementation +
              " forward_training src:f32 wei:f32 dst:f32 alg:convolution_direct "
              "mb8_ic32oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1"};
}

// Every verdict a printer must show: deterministic (with kernels whose names need escaping),
// nondeterministic with a measured divergence and varying kernels, raises (a message with quotes),
// unsupported, a crash that contradicts the documentation, and an invariance probe that varies by
// default and holds under strict.
inline Report sample_report() {
  const std::vector<std::string> sum_kernels = {"aten::sum", "void at::native::reduce_kernel<float, 4>(T&&)"};
  auto sum_default = cell("sum", "f32", "default threads=1", VerdictKind::deterministic,
                          "a1b2c3d4e5f60718293a4b5c6d7e8f90", timing(1000000, 950000, 1100000));
  sum_default.verdict.kernel_digest = "0123456789abcdef0123456789abcdef";
  sum_default.verdict.timing.ci_low_ns = 990000;  // the median's 95% interval, as workers now keep it
  sum_default.verdict.timing.ci_high_ns = 1010000;
  sum_default.verdict.timing.target_reached = true;
  sum_default.cost = cost_ratio(sum_default.verdict.timing, sum_default.verdict.timing);
  sum_default.observations = {
      traced_process(0, sum_default.verdict.digest, sum_default.verdict.kernel_digest, sum_kernels, 1000000),
      traced_process(1, sum_default.verdict.digest, sum_default.verdict.kernel_digest, sum_kernels, 1000000)};
  auto sum_strict = cell("sum", "f32", "strict threads=1", VerdictKind::deterministic,
                         "a1b2c3d4e5f60718293a4b5c6d7e8f90", timing(1200000, 1150000, 1300000));
  sum_strict.verdict.timing.ci_low_ns = 1180000;
  sum_strict.verdict.timing.ci_high_ns = 1220000;
  sum_strict.cost = cost_ratio(sum_strict.verdict.timing, sum_default.verdict.timing);

  auto index_default = cell("index_put_accumulate", "f32", "default threads=1", VerdictKind::nondeterministic, "",
                            timing(2000000, 1900000, 2200000));
  index_default.verdict.distinct_digests = 3;
  index_default.verdict.divergence_scope = "within-process";
  index_default.verdict.divergence = Divergence{"out", 1, 3, 100, 0.5, 2};
  index_default.verdict.kernels_varied = true;
  index_default.cost = cost_ratio(index_default.verdict.timing, index_default.verdict.timing);
  index_default.observations = {
      traced_process(0, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "11111111111111111111111111111111",
                     {"aten::index_put_", "at::native::atomic_add<double>"}, 2000000),
      traced_process(1, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "22222222222222222222222222222222",
                     {"aten::index_put_", "at::native::sort & scan"}, 2000000)};
  auto index_strict = cell("index_put_accumulate", "f32", "strict threads=1", VerdictKind::raises);
  index_strict.verdict.message = "index_put_ with accumulate=True \"does not have a deterministic implementation\"";

  auto ctc_default = cell("ctc_loss", "cudnn-f32", "default threads=1", VerdictKind::unsupported);
  ctc_default.verdict.message = "the cuDNN path exists only on CUDA";
  auto ctc_strict = cell("ctc_loss", "cudnn-f32", "strict threads=1", VerdictKind::crashed);
  ctc_strict.verdict.message = "SIGSEGV in <cudnn> & friends";
  ctc_strict.contradiction =
      Contradiction{"a verdict", "the probe failed: crashed (SIGSEGV in <cudnn> & friends)", true};

  // An invariance probe: one row of mm varies with the batch by default, holds under strict.
  auto batch_default = cell("batch.mm", "f32", "default threads=1", VerdictKind::varies,
                            "c0ffee00c0ffee00c0ffee00c0ffee00", timing(3000000, 2900000, 3100000));
  batch_default.cell.invariance = Invariance::batch;
  batch_default.verdict.message = "2 of 5 perturbed results differ from the reference; first batch=7@first";
  batch_default.verdict.variations = {Divergence{"batch=7@first", 0, 969, 1024, 2.4e-7, 6144},
                                      Divergence{"batch=7@last", 0, -1, 0, 0, 0}};
  auto batch_strict = cell("batch.mm", "f32", "strict threads=1", VerdictKind::invariant,
                           "c0ffee00c0ffee00c0ffee00c0ffee01", timing(3000000, 2900000, 3100000));
  batch_strict.cell.invariance = Invariance::batch;

  auto report = report_of(
      {sum_default, sum_strict, index_default, index_strict, ctc_default, ctc_strict, batch_default, batch_strict});
  report.notes.push_back({"sum",
                          "f32",
                          "cpu",
                          "threads",
                          {"1", "2"},
                          "sum/f32: threads 1 vs 2 give different bits (each deterministic on its own)"});
  report.documentation = DocumentationSource{"2.14.1+cu130", "2.14", false};
  return report;
}

// What parsing `text` as a baseline file named base.yaml says is wrong with it ("no error" when nothing).
inline std::string baseline_error(const std::string& text) {
  try {
    parse_baseline(text, "base.yaml");
  } catch (const UserError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace repro_audit::testing
