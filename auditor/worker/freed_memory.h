#pragma once
// What a worker's runs free stays with the worker for its next runs.

namespace repro_audit {

// By default glibc gives a block back to the system when it is freed once it is over a threshold (which
// starts at 128 KiB and grows with the blocks freed), and trims the heap's top past another, so a run of a
// probe with large inputs or outputs faulted much of its memory in afresh, page by page: the kernel's
// zeroing was a third or more of a small probe's time (`run --probe sum --probe cumsum --no-cost
// --processes 1`: 1.2 s of 2.5 s of CPU). This takes blocks up to 32 MiB (glibc's largest threshold) from
// the heap and never trims it (mallopt: M_MMAP_THRESHOLD, M_TRIM_THRESHOLD at its largest): what runs
// free, the next runs reuse. Larger blocks are still mapped and given back, so the heap holds no hole of
// that size. A choice of the user's (GLIBC_TUNABLES naming glibc.malloc) is left as it is. The Python
// runner does the same (python_runner/python_runner.py).
void keep_freed_memory();

}  // namespace repro_audit
