#pragma once
// The process groups this build can make (ranks/rank_group.h), one file each.
#include "ranks/rank_group.h"

namespace repro_audit {

std::unique_ptr<RankGroup> make_gloo_group(const RankGroupOptions& options);
// Only in a build with CUDA and NCCL (REPRO_AUDIT_HAS_NCCL).
std::unique_ptr<RankGroup> make_nccl_group(const RankGroupOptions& options);

}  // namespace repro_audit
