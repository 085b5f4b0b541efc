#pragma once
// What changed between two kernel sequences, said by library and by name: "MKL code path AVX2 ->
// AVX-512 (DL Boost)", "oneDNN convolution jit:avx512_core_bf16 -> jit:avx512_core", "cuBLAS kernel
// sm80_xmma_gemm_... -> sm90_xmma_gemm_...". The records are those the tracers write
// (verdict/observation.h): library verbose lines on the CPU ("mkl:...", "onednn:..."), CUPTI kernel
// names on CUDA, ATen op names.
#include <string>
#include <string_view>
#include <vector>

#include "verdict/observation.h"

namespace repro_audit {

// One way in which a library's records changed. Identical changes of several records are one entry.
struct KernelChange {
  std::string library;  // kernel_library(): "MKL", "oneDNN", "cuDNN", "cuBLAS", "cuBLASLt", "CUTLASS", "ATen", "other"
  // What of it changed: "code path" (MKL's ISA), "isa" (oneDNN's), "version", "build", "banner"; a
  // oneDNN primitive kind ("convolution": its implementation changed); an MKL function ("SGEMM": its
  // CNR mode changed; "SGEMM threads"); "kernel": the first record no rule above explains.
  std::string aspect;
  std::string before;  // e.g. "AVX2", "jit:avx512_core_bf16", "CNR:OFF", a kernel's name; "" when there was none
  std::string after;
  int records = 1;  // how many records changed this way
  int added = 0;    // "kernel" only: records of the library only after, and only before (as multisets)
  int removed = 0;
};

// The library a record comes from, from its prefix ("mkl:", "onednn:") or, for CUDA kernel names,
// guessed from the name ("cudnn", "xmma_fprop" -> cuDNN; "sgemm", "nvjet" -> cuBLAS; "at::native" -> ATen).
std::string kernel_library(std::string_view record_name);

// The library's changes in the order its records first appear, libraries in the order they first
// appear after, then before; empty when the sequences are equal.
std::vector<KernelChange> describe_kernel_changes(const std::vector<KernelRecord>& before,
                                                  const std::vector<KernelRecord>& after);

// One line: "MKL code path AVX2 -> AVX-512 (DL Boost)", "oneDNN reorder jit:blk -> jit:uni (2 records)",
// "cuBLAS kernel none -> sm90_xmma_gemm_f32f32 (1 added)"; long names are cut at 160 characters.
std::string kernel_change_text(const KernelChange& change);

// An ISA description from MKL's or oneDNN's banner, shortened to the ISA and its extensions:
// "Intel(R) Advanced Vector Extensions 512 (Intel(R) AVX-512) with support for Intel(R) Deep Learning
// Boost (Intel(R) DL Boost), ..." -> "AVX-512 (DL Boost)"; "generic x86-64" when it names no ISA.
std::string short_isa(std::string_view text);

}  // namespace repro_audit
