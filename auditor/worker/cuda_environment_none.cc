// CPU-only builds: no CUDA facts to report.
#include "worker/environment.h"

namespace repro_audit {

GpuFacts cuda_environment() {
  GpuFacts facts;
  facts.available = false;
  facts.reason = "built without CUDA";
  return facts;
}

}  // namespace repro_audit
