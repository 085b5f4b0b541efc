#pragma once
#include <memory>
#include <string>

#include "trace/tracer.h"

namespace repro_audit {

// CPU: ATen ops through RecordFunction, then the oneDNN primitives and MKL calls they ran (their
// verbose output). CUDA: CUPTI kernels (CUDA builds), else a tracer that says why not.
std::unique_ptr<Tracer> make_tracer(const std::string& device);

}  // namespace repro_audit
