// CPU-only builds, and repro-audit-cpu (a CUDA build's worker for CPU audits, which does not load
// libtorch's CUDA half): no CUDA facts from this process. An audit whose workers are repro-audit-cpu
// takes them from its own process (audit/audit.cc).
#include "worker/environment.h"

namespace repro_audit {

GpuFacts cuda_environment() {
  GpuFacts facts;
  facts.available = false;
  facts.reason = "built without CUDA";
  return facts;
}

}  // namespace repro_audit
