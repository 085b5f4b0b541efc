#include "config/documentation.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace repro_audit {
namespace {

std::vector<long> components(const std::string& version) {
  std::vector<long> numbers;
  std::size_t at = 0;
  while (at < version.size() && std::isdigit(static_cast<unsigned char>(version[at]))) {
    long number = 0;
    while (at < version.size() && std::isdigit(static_cast<unsigned char>(version[at])) && number < 1'000'000)
      number = number * 10 + (version[at++] - '0');
    numbers.push_back(number);
    if (at >= version.size() || version[at] != '.') break;
    ++at;
  }
  return numbers;
}

// "2.11.0+cu130" -> "2.11": documentation changes with a minor release.
std::string release_of(const std::string& version) {
  const auto numbers = components(version);
  if (numbers.size() < 2) return "";
  return fmt::format("{}.{}", numbers[0], numbers[1]);
}

// The entry of `history` for `device_kind` that applies to `torch_version`: the earliest change still
// ahead of it. Null when torch has every change (the newest declaration holds).
const DocumentedBefore* applicable(const std::vector<DocumentedBefore>& history, const std::string& device_kind,
                                   const std::string& torch_version) {
  const DocumentedBefore* found = nullptr;
  for (const auto& entry : history) {
    if (entry.device_kind != device_kind || compare_torch_versions(torch_version, entry.until) >= 0) continue;
    if (!found || compare_torch_versions(entry.until, found->until) < 0) found = &entry;
  }
  return found;
}

void resolve(std::map<std::string, Documented>& documented, const std::vector<DocumentedBefore>& history,
             const std::string& torch_version) {
  for (const auto& entry : history)
    if (const auto* older = applicable(history, entry.device_kind, torch_version))
      documented[entry.device_kind] = older->documented;
}

}  // namespace

int compare_torch_versions(const std::string& a, const std::string& b) {
  auto left = components(a), right = components(b);
  const auto size = std::max(left.size(), right.size());
  left.resize(size, 0);
  right.resize(size, 0);
  return left < right ? -1 : left > right ? 1 : 0;
}

std::string DocumentationSource::text() const {
  if (torch.empty())
    return fmt::format("the newest declarations (torch {}): the torch that ran is unknown", kNewestDocumentedTorch);
  if (newer_than_known)
    return fmt::format("torch {}'s documentation, the newest known: torch {} is newer", release, torch);
  return fmt::format("torch {}'s documentation", release);
}

DocumentationSource resolve_documentation(Catalogue& catalogue, const std::string& torch_version) {
  DocumentationSource source{torch_version, kNewestDocumentedTorch, false};
  const auto release = release_of(torch_version);
  if (!release.empty() && compare_torch_versions(release, kNewestDocumentedTorch) <= 0) source.release = release;
  source.newer_than_known = !release.empty() && compare_torch_versions(release, kNewestDocumentedTorch) > 0;
  // An unknown version is taken as the newest: every change has happened.
  const auto version = release.empty() ? std::string(kNewestDocumentedTorch) : torch_version;
  for (auto& probe : catalogue) {
    resolve(probe.documented, probe.documented_before, version);
    for (auto& variant : probe.variants) resolve(variant.documented, variant.documented_before, version);
  }
  return source;
}

}  // namespace repro_audit
