#pragma once
// What a worker's runs free stays with the worker for its next runs.

namespace repro_audit {

// By default glibc gives every block over a threshold back to the system when it is freed (and the
// heap's top past another), so each run of a probe with large inputs or outputs faulted its memory in
// afresh, page by page: a third or more of a small probe's time went to the kernel zeroing pages
// (`run --probe sum --probe cumsum --no-cost --processes 1`: 1.2 s of 2.5 s of CPU). This keeps a
// process's memory at its peak instead (mallopt: M_MMAP_MAX 0, M_TRIM_THRESHOLD at its largest). A
// choice of the user's (GLIBC_TUNABLES naming glibc.malloc) is left as it is. The Python runner does
// the same (python_runner/python_runner.py).
void keep_freed_memory();

}  // namespace repro_audit
