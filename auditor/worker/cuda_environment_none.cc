// CPU-only builds: no CUDA facts to report.
#include "worker/environment.h"

namespace repro_audit {

nlohmann::json cuda_environment() { return {{"available", false}, {"reason", "built without CUDA"}}; }

}  // namespace repro_audit
