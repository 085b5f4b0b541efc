#include "ranks/rank_group.h"

#include <fmt/format.h>

#include "probe/probe.h"
#include "ranks/process_groups.h"

namespace repro_audit {

std::string collective_backend(const std::string& device_kind) {
#ifdef REPRO_AUDIT_HAS_GLOO
  if (device_kind == "cpu") return "gloo";
#endif
#ifdef REPRO_AUDIT_HAS_NCCL
  if (device_kind == "cuda") return "nccl";
#endif
  return "";
}

std::unique_ptr<RankGroup> make_rank_group(const RankGroupOptions& options) {
  const auto kind = options.device.is_cuda() ? "cuda" : "cpu";
  const auto backend = collective_backend(kind);
  if (backend.empty()) throw Unsupported(fmt::format("this build has no collective backend for {}", kind));
#ifdef REPRO_AUDIT_HAS_NCCL
  if (backend == "nccl") return make_nccl_group(options);
#endif
#ifdef REPRO_AUDIT_HAS_GLOO
  return make_gloo_group(options);
#else
  throw Unsupported("this build has no gloo");
#endif
}

}  // namespace repro_audit
