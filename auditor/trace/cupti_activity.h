#pragma once
// The CUPTI kernel activity record this build reads: the struct changes with the CUDA version
// (Kernel10 in 13.0, Kernel11 from 13.1). The tracer reads it and its tests build it, from this one
// choice. CUDA-only: includes cupti.h, so only the CUPTI tracer and its tests include this header.
#include <cuda.h>
#include <cupti.h>

namespace repro_audit {

#if CUDA_VERSION >= 13010
using KernelActivity = CUpti_ActivityKernel11;
#else
using KernelActivity = CUpti_ActivityKernel10;
#endif

}  // namespace repro_audit
