#pragma once
// How many cores the audit may keep busy: what `--jobs 0` divides among the workers.
#include <string>

namespace repro_audit {

// The cgroup CPU quota of this process in whole cores (rounded up), from the files under `root` ("/"
// on a real machine): cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`, the
// smallest along this process's cgroup and its ancestors. 0 when none is set. A container's `--cpus`
// or a Kubernetes CPU limit shows only here: the CPU affinity still lists every core of the node.
int cgroup_cpu_limit(const std::string& root = "/");

// The cores this process may run on (its CPU affinity), no more than its cgroup CPU quota.
int usable_cores();

}  // namespace repro_audit
