#pragma once
// What a worker saw of one cell in one process: plain values, streamed back as JSON.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repro_audit {

// How a cell's runs in one process ended. The names exist only at the JSON edge (report/json_io.cc).
enum class ObservationStatus {
  ok,           // every run finished and was digested
  exception,    // the probe or the op threw
  unsupported,  // the probe has no implementation for the device or dtype
  crashed,      // the worker died (a signal, an exit mid-cell)
  timeout,      // the worker exceeded the cell's time limit and was ended
};

inline constexpr std::array<std::pair<ObservationStatus, std::string_view>, 5> kObservationStatusNames = {{
    {ObservationStatus::ok, "ok"},
    {ObservationStatus::exception, "exception"},
    {ObservationStatus::unsupported, "unsupported"},
    {ObservationStatus::crashed, "crashed"},
    {ObservationStatus::timeout, "timeout"},
}};

inline std::string to_string(ObservationStatus status) {
  for (const auto& [value, name] : kObservationStatusNames)
    if (value == status) return std::string(name);
  return "?";
}

inline std::optional<ObservationStatus> observation_status_from_string(std::string_view text) {
  for (const auto& [value, name] : kObservationStatusNames)
    if (text == name) return value;
  return std::nullopt;
}

// "ok, exception, unsupported, crashed, timeout": for the error that rejects any other name.
inline std::string observation_status_names() {
  std::string names;
  for (const auto& [value, name] : kObservationStatusNames) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

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
  ObservationStatus status = ObservationStatus::ok;
  std::string message;  // exception text, unsupported reason, signal name
  std::vector<RunObservation> runs;
  std::vector<std::string> warnings;
  std::optional<Divergence> divergence;
  // Distinct kernel sequences of this process, keyed by their digest.
  std::vector<std::pair<std::string, std::vector<KernelRecord>>> kernel_sequences;
  std::string trace_unavailable;  // why no kernels were traced, when none were
  std::string input_digest;       // the inputs the probe's context made; "" when unknown (older files)
  // Invariance probes: each output of the first run that differs from the reference, measured
  // against it (Divergence::output names the perturbation).
  std::vector<Divergence> variations;
};

}  // namespace repro_audit
