#pragma once
// A RankGroup over a c10d backend (ProcessGroupGloo, ProcessGroupNCCL): the calls the probes use,
// each waited for.
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "ranks/rank_group.h"

namespace repro_audit {

std::unique_ptr<RankGroup> make_c10d_group(c10::intrusive_ptr<c10d::Backend> backend, int rank, int size,
                                           at::Device device);

}  // namespace repro_audit
