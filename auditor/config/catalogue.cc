#include "config/catalogue.h"

#include <array>
#include <utility>

namespace repro_audit {
namespace {

// Constant-initialised: probes name verdicts from static initialisers in other files.
constexpr std::array<std::pair<VerdictKind, const char*>, 8> kVerdictNames = {{
    {VerdictKind::deterministic, "deterministic"},
    {VerdictKind::nondeterministic, "nondeterministic"},
    {VerdictKind::warns, "warns"},
    {VerdictKind::raises, "raises"},
    {VerdictKind::unsupported, "unsupported"},
    {VerdictKind::error, "error"},
    {VerdictKind::crashed, "crashed"},
    {VerdictKind::timeout, "timeout"},
}};

}  // namespace

const char* to_string(Documented documented) {
  switch (documented) {
    case Documented::deterministic:
      return "deterministic";
    case Documented::alternative_under_strict:
      return "alternative_under_strict";
    case Documented::raises_under_strict:
      return "raises_under_strict";
    case Documented::nondeterministic:
      return "nondeterministic";
    case Documented::cublas_workspace:
      return "deterministic_with_cublas_workspace_config";
  }
  return "?";
}

const char* to_string(VerdictKind kind) {
  for (const auto& [k, name] : kVerdictNames)
    if (k == kind) return name;
  return "?";
}

std::optional<VerdictKind> verdict_from_string(const std::string& text) {
  for (const auto& [k, name] : kVerdictNames)
    if (text == name) return k;
  return std::nullopt;
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
  }
  return "?";
}

const VariantInfo* ProbeInfo::find_variant(const std::string& variant) const {
  for (const auto& info : variants)
    if (info.name == variant) return &info;
  return nullptr;
}

Documented ProbeInfo::documented_on(const std::string& variant, const std::string& device_kind) const {
  if (const auto* info = find_variant(variant)) {
    auto own = info->documented.find(device_kind);
    if (own != info->documented.end()) return own->second;
  }
  auto it = documented.find(device_kind);
  return it == documented.end() ? Documented::deterministic : it->second;
}

const ProbeInfo* find_probe(const Catalogue& catalogue, const std::string& name) {
  for (const auto& probe : catalogue)
    if (probe.name == name) return &probe;
  return nullptr;
}

std::vector<std::string> probe_names(const Catalogue& catalogue) {
  std::vector<std::string> names;
  for (const auto& probe : catalogue) names.push_back(probe.name);
  return names;
}

}  // namespace repro_audit
