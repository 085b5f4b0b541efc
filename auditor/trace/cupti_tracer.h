#pragma once
// CUDA backend: kernels from the CUPTI Activity API. This header names no CUPTI type; cupti.h comes in
// only through trace/cupti_activity.h, in cupti_tracer.cc and its tests.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "trace/tracer.h"

namespace repro_audit {

// With no driver CUPTI cannot start: the tracer then reports "CUPTI: <reason>" and records nothing.
std::unique_ptr<Tracer> make_cupti_tracer();

// Turns a completed CUPTI activity buffer into neutral records (kernels only, demangled names,
// grid and block), in buffer order. Separate from the tracer so tests can feed it host-built records.
std::vector<KernelRecord> kernel_records_from_buffer(std::uint8_t* buffer, std::size_t valid_size);

// What a buffer says beyond the kernels: each kernel's correlation id, and the external
// correlation records (correlation id -> the per-op recorder's op, pushed while the op ran).
struct CuptiBufferRecords {
  std::vector<KernelRecord> kernels;
  std::vector<std::uint32_t> correlations;                        // per kernel
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external;  // correlation id -> op
};
CuptiBufferRecords cupti_records_from_buffer(std::uint8_t* buffer, std::size_t valid_size);

// Sets each kernel's op from the external correlations (a kernel with none keeps op -1).
void attribute_kernels(std::vector<KernelRecord>& kernels, const std::vector<std::uint32_t>& correlations,
                       const std::vector<std::pair<std::uint32_t, std::uint64_t>>& external);

}  // namespace repro_audit
