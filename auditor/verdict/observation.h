#pragma once
// What a worker saw of one cell in one process: plain values, streamed back as JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace repro_audit {

struct KernelRecord {
  std::string name;
  std::string grid;  // "x,y,z" where the backend has it
  std::string block;
};

struct RunObservation {
  std::string digest;                                        // combined over every output
  std::vector<std::pair<std::string, std::string>> outputs;  // name -> digest, in the probe's order
  bool warmup = false;                                       // digested, not timed
  std::int64_t time_ns = 0;
  std::string kernel_digest;  // digest of the kernel sequence; empty when not traced
};

// The first output of a run that differs from run 0 of the same process, measured element-wise.
struct Divergence {
  std::string output;
  int run = 0;
  std::int64_t differing_elements = -1;  // -1: not measured (only digests were compared)
  std::int64_t elements = 0;
  double max_abs_difference = 0;
  double max_ulp_difference = 0;
};

struct ProcessObservation {
  int process = 0;
  std::string status = "ok";  // ok | exception | unsupported | crashed | timeout
  std::string message;        // exception text, unsupported reason, signal name
  std::vector<RunObservation> runs;
  std::vector<std::string> warnings;
  std::optional<Divergence> divergence;
  // Distinct kernel sequences of this process, keyed by their digest.
  std::vector<std::pair<std::string, std::vector<KernelRecord>>> kernel_sequences;
  std::string trace_unavailable;  // why no kernels were traced, when none were
};

}  // namespace repro_audit
