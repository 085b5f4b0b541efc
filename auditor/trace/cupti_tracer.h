#pragma once
// CUDA backend: kernels from the CUPTI Activity API. This header names no CUPTI type; only
// cupti_tracer.cc includes cupti.h.
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

}  // namespace repro_audit
