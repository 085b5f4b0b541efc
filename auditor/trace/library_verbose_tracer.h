#pragma once
// CPU: what the wrapped tracer records, followed by the oneDNN primitives and MKL calls the run
// executed. Both libraries print these to stdout in verbose mode; verbose mode is on only between
// begin_run and end_run, and stdout (fd 1) points at an in-memory file meanwhile, whose lines
// library_verbose.h turns into records. Other output of the run is passed on to the real stdout.
#include <memory>

#include "trace/tracer.h"

namespace repro_audit {

// One at a time per process (stdout and the libraries' verbose switches are process-wide).
std::unique_ptr<Tracer> make_library_verbose_tracer(std::unique_ptr<Tracer> inner);

// MKL's first call in verbose mode prints its banner and, where MKL's clock could not be preset
// (trace/mkl_clock.h), measures the clock (0-1 s of CPU on x86: it spins until time() ticks): made here
// once, with its output captured and learnt, so no run pays it. A worker whose cells have no warm-up
// run, or a --budget share, calls it before its first run (worker_main.cc); otherwise a warm-up run
// pays it, and only where a cell calls MKL. Not while a tracer exists.
void warm_up_library_verbose();

}  // namespace repro_audit
