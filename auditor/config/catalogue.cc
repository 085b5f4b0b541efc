#include "config/catalogue.h"

#include <array>
#include <utility>

namespace repro_audit {
namespace {

// Constant-initialised: probes name verdicts from static initialisers in other files.
constexpr std::array<std::pair<VerdictKind, const char*>, 10> kVerdictNames = {{
    {VerdictKind::deterministic, "deterministic"},
    {VerdictKind::nondeterministic, "nondeterministic"},
    {VerdictKind::warns, "warns"},
    {VerdictKind::raises, "raises"},
    {VerdictKind::unsupported, "unsupported"},
    {VerdictKind::error, "error"},
    {VerdictKind::crashed, "crashed"},
    {VerdictKind::timeout, "timeout"},
    {VerdictKind::invariant, "invariant"},
    {VerdictKind::varies, "varies"},
}};

constexpr std::array<std::pair<Documented, const char*>, 7> kDocumentedNames = {{
    {Documented::deterministic, "deterministic"},
    {Documented::alternative_under_strict, "alternative_under_strict"},
    {Documented::alternative_unless_warn_only, "alternative_under_strict_unless_warn_only"},
    {Documented::raises_under_strict, "raises_under_strict"},
    {Documented::nondeterministic, "nondeterministic"},
    {Documented::cublas_workspace, "deterministic_with_cublas_workspace_config"},
    {Documented::unknown, "unknown"},
}};

constexpr std::array<std::pair<Invariance, const char*>, 4> kInvarianceNames = {{
    {Invariance::none, "none"},
    {Invariance::batch, "batch"},
    {Invariance::layout, "layout"},
    {Invariance::split, "split"},
}};

constexpr std::array<std::pair<ProbeKind, const char*>, 4> kProbeKindNameList = {{
    {ProbeKind::repeat, "repeat"},
    {ProbeKind::invariance, "invariance"},
    {ProbeKind::collective, "collective"},
    {ProbeKind::all, "all"},
}};

template <typename Enum, std::size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& names, Enum value) {
  for (const auto& [k, name] : names)
    if (k == value) return name;
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::array<std::pair<Enum, const char*>, N>& names, const std::string& text) {
  for (const auto& [k, name] : names)
    if (text == name) return k;
  return std::nullopt;
}

}  // namespace

const char* to_string(Documented documented) { return name_of(kDocumentedNames, documented); }

std::optional<Documented> documented_from_string(const std::string& text) { return value_of(kDocumentedNames, text); }

const char* to_string(VerdictKind kind) { return name_of(kVerdictNames, kind); }
std::optional<VerdictKind> verdict_from_string(const std::string& text) { return value_of(kVerdictNames, text); }
std::string verdict_names() {
  std::string names;
  for (const auto& [kind, name] : kVerdictNames) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

const char* to_string(Invariance invariance) { return name_of(kInvarianceNames, invariance); }
std::optional<Invariance> invariance_from_string(const std::string& text) { return value_of(kInvarianceNames, text); }
std::string invariance_level(Invariance invariance) {
  return invariance == Invariance::none ? "" : std::string(to_string(invariance)) + "-invariant";
}

const char* to_string(ProbeKind kind) { return name_of(kProbeKindNameList, kind); }
std::optional<ProbeKind> probe_kind_from_string(const std::string& text) { return value_of(kProbeKindNameList, text); }

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

const char* long_name(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return "float16";
    case DType::bf16:
      return "bfloat16";
    case DType::f32:
      return "float32";
    case DType::f64:
      return "float64";
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

double ProbeInfo::weight_of(const std::string& variant) const {
  const auto* info = find_variant(variant);
  return info && info->weight ? *info->weight : weight;
}

const ProbeInfo* find_probe(const Catalogue& catalogue, const std::string& name) {
  for (const auto& probe : catalogue)
    if (probe.name == name) return &probe;
  return nullptr;
}

bool is_of_kind(const ProbeInfo& probe, ProbeKind kind) {
  if (kind == ProbeKind::all) return true;
  if (probe.collective || kind == ProbeKind::collective) return probe.collective && kind == ProbeKind::collective;
  return (probe.invariance != Invariance::none) == (kind == ProbeKind::invariance);
}

std::vector<std::string> probe_names(const Catalogue& catalogue) {
  std::vector<std::string> names;
  for (const auto& probe : catalogue) names.push_back(probe.name);
  return names;
}

}  // namespace repro_audit
