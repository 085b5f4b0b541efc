#pragma once
// How far a variant's bits carry: the widest scope over which they held, measured, never assumed.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace repro_audit {

struct CellReport;

// In order: each level holds everything below it.
enum class PortabilityLevel {
  nondeterministic,        // runs in one process disagree
  run_to_run,              // runs in one process agree; processes do not (or only one process ran)
  cross_process,           // every process agrees
  thread_count_invariant,  // ... under every thread count measured
  isa_invariant,           // ... and under every CPU capability and MKL branch measured
};

const char* to_string(PortabilityLevel level);  // "run-to-run", "isa-invariant", ...
std::optional<PortabilityLevel> portability_level_from_string(const std::string& text);

// The level of one variant under one set of in-process settings (the settings that are not a
// portability axis: deterministic mode, cuDNN switches, seed).
struct Portability {
  std::string probe;
  std::string variant;
  std::string device;
  std::string settings;  // those in-process settings off their default, "" for the defaults
  PortabilityLevel level = PortabilityLevel::nondeterministic;
  // What broke the next level ("threads 1 vs 2 give different bits"), or what was not measured
  // ("one thread count measured"); empty at the top.
  std::string limit;
  bool defaults = false;  // the in-process settings are the defaults (seed aside): what a user gets
  // Invariance probes: "batch-invariant" (or layout-, split-) when every cell's perturbed results
  // equal its reference; "" when one varies (the limit says where) or for a repeat-and-digest probe.
  std::string invariance;
};

// "cross-process" or "cross-process, batch-invariant": the level and the invariance measured.
std::string level_text(const Portability& entry);

// One entry per variant and in-process settings that have cells with digests (raising, skipped and
// failed cells say nothing about portability), in the cells' order.
std::vector<Portability> find_portability(const std::vector<CellReport>& cells);

// The entry the matrix shows per row ("probe/variant"): the default settings' entry, else the first.
std::map<std::string, const Portability*> row_portability(const std::vector<Portability>& entries);

}  // namespace repro_audit
