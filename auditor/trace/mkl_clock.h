#pragma once
// MKL's verbose mode times every call it prints, in seconds of the CPU's time-stamp counter, whose
// frequency it measures the first time: it spins until time() ticks over (0 to 1 s of a core, half a
// second on average, in every process whose runs call MKL with verbose mode on). The frequency is a
// variable of MKL's inside libtorch_cpu (mkl_clocks_freq, in GHz), which MKL measures only while it
// holds what the library started with (-1). The tracer discards the times MKL prints; the frequency
// set here is the counter's, as MKL measures it (tests/torch/library_verbose_tracer_test.cc).

namespace repro_audit {

struct MklClockFrequency {
  double* value = nullptr;  // in this process; nullptr: not found
  double unmeasured = 0;    // what the library file holds for it: MKL has not measured it while it holds this
};

// That variable, found by name in the symbol table of the library that defines MKL's service functions
// (8 bytes in a writable section); no value where there is none (no MKL, a stripped library, another
// layout, not x86-64).
MklClockFrequency mkl_clock_frequency_variable();

// Where the variable is found and MKL has not measured it (it holds its unmeasured value, which is no
// frequency), sets it to the counter's frequency measured over 2 ms; true when it was set. Meant for
// before MKL's verbose mode is first switched on.
bool preset_mkl_clock_frequency();

}  // namespace repro_audit
