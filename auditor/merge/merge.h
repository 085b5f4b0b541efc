#pragma once
// `merge`: the reports of an audit's shards (and of the same shards run on several hosts of one
// platform) become one report whose cells are judged again from every observation, so they equal
// the unsharded audit's. Torch-free.
#include <string>
#include <vector>

#include "report/json_io.h"

namespace repro_audit {

struct MergeOptions {
  bool allow_partial = false;  // missing shards are named in the report instead of refused
};

// Throws UserError, naming the files, for reports of different configs, tool versions, devices or
// platforms, interrupted reports, shards of different partitions, overlapping shards, a shard given
// twice from one host, and (without allow_partial) missing shards. Shards run on several hosts add
// their processes to each cell: "deterministic" then means the same bits on every host.
Report merge_reports(const std::vector<ReportFile>& inputs, const MergeOptions& options);

}  // namespace repro_audit
