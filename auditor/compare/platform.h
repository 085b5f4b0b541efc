#pragma once
// The gate's definition of a platform: the fingerprint fields whose change can change bits or kernel
// choice. DRIFT on a changed platform is expected; on an unchanged one it is a regression.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace repro_audit {

// One fingerprint field as compare reads it.
struct FingerprintField {
  std::string label;                 // "CPU flags"
  std::string value;                 // as text; "" when not recorded
  std::vector<std::string> members;  // a set-valued field (is_set): its members, compared as a set
  bool is_set = false;
  bool counts_for_platform = true;  // false: shown when it changes, but changes no bits (OS, tool, ...)
};

// Every field of a fingerprint, in report order (report/text_format.h), classified.
std::vector<FingerprintField> fingerprint_fields(const nlohmann::json& environment);

// One fingerprint field that differs between two snapshots.
struct EnvironmentChange {
  std::string field;                 // the label: "torch", "CPU flags", "env ATEN_CPU_CAPABILITY", ...
  std::string before;                // "" when not recorded
  std::string after;                 // "" when not recorded
  std::string difference;            // "AVX512 -> AVX2"; a set "-avx512f -avx512bw +amx_tile"; "not recorded -> AVX2"
  std::vector<std::string> removed;  // a set-valued field recorded on both sides: members only before
  std::vector<std::string> added;    // ... and only after
  bool platform = false;             // the field counts for the platform
  bool unknown = false;              // recorded on one side only: a platform field then counts as possibly changed
};

// The fields that differ, field by field. A field absent on both sides is no change; a numerics
// variable missing from a side that records its numerics environment is "unset" there.
std::vector<EnvironmentChange> environment_changes(const nlohmann::json& before, const nlohmann::json& after);

// A platform field differs or is recorded on one side only.
bool is_platform_change(const std::vector<EnvironmentChange>& changes);

// "Platform changed: CPU flags -avx512f +amx_tile, ATen capability AVX512 -> AVX2; not recorded in
// base.yaml: CPU id (counted as possibly changed)", "Platform unchanged", or "Platform unchanged; what
// changed (OS, tool) changes neither bits nor kernel choice". The sources name the snapshots.
std::string platform_summary(const std::vector<EnvironmentChange>& changes, const std::string& before_source,
                             const std::string& after_source);

}  // namespace repro_audit
