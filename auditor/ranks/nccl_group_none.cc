// repro-audit-cpu (CUDA builds' worker for CPU audits): no NCCL, since libtorch's CUDA half is not
// loaded; a CUDA audit's workers are repro-audit itself.
#include "probe/probe.h"
#include "ranks/process_groups.h"

namespace repro_audit {

std::unique_ptr<RankGroup> make_nccl_group(const RankGroupOptions&) {
  throw Unsupported("this worker runs CPU cells only (repro-audit-cpu): NCCL needs repro-audit itself");
}

}  // namespace repro_audit
