#include "compare/platform.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>

#include "report/text_format.h"

namespace repro_audit {
using nlohmann::json;
namespace {

// Facts that change neither bits nor kernel choice: the OS kernel's build string, the tool's own
// version, how many CPUs exist (the thread counts in use are fields of their own), GPU memory size,
// the CUDA version torch was built against (the runtime in use is a field of its own), why CUDA or
// NVML is unavailable (the versions and "CUDA available" say what is in use), the NVML driver string
// (the CUDA driver is a field of its own), the fingerprint's version, and where the py cells' interpreter
// and its torch lie (the torch version it imports is a field of its own).
// Every other field counts, so a field added later counts until someone argues it away here.
const std::set<std::string, std::less<>> kNotPlatform = {"OS",
                                                         "tool",
                                                         "logical CPUs",
                                                         "GPU memory",
                                                         "fingerprint",
                                                         "CUDA compiled runtime",
                                                         "CUDA unavailable",
                                                         "NVML",
                                                         "NVML unavailable",
                                                         "Python",
                                                         "Python torch path",
                                                         "Python xxhash"};

bool records_numerics_environment(const json& environment) {
  return environment.is_object() && environment.contains("numerics_environment") &&
         environment["numerics_environment"].is_object();
}

// The field of a label that one side does not list at all (only numerics variables come and go): a
// side that records its numerics environment lists every variable that is set, so it is "unset" there.
FingerprintField missing_field(const FingerprintField& other, const json& environment) {
  auto field = other;
  field.members.clear();
  field.value = records_numerics_environment(environment) ? "unset" : "";
  field.is_set = false;
  return field;
}

// The labels of both sides: the old order, a label only the new side has after its predecessor there.
std::vector<std::string> merged_labels(const std::vector<FingerprintField>& before,
                                       const std::vector<FingerprintField>& after) {
  std::vector<std::string> labels;
  for (const auto& field : before) labels.push_back(field.label);
  auto position = labels.begin();
  for (const auto& field : after) {
    const auto found = std::find(labels.begin(), labels.end(), field.label);
    position = found != labels.end() ? found + 1 : labels.insert(position, field.label) + 1;
  }
  return labels;
}

const FingerprintField* find_field(const std::vector<FingerprintField>& fields, const std::string& label) {
  for (const auto& field : fields)
    if (field.label == label) return &field;
  return nullptr;
}

// What left and what came, each in its side's order: "-avx512f -avx512bw +amx_tile".
void diff_sets(const std::vector<std::string>& before, const std::vector<std::string>& after,
               EnvironmentChange& change) {
  const std::set<std::string> old_members(before.begin(), before.end()), new_members(after.begin(), after.end());
  std::vector<std::string> parts;
  for (const auto& member : before)
    if (!new_members.count(member)) {
      change.removed.push_back(member);
      parts.push_back("-" + member);
    }
  for (const auto& member : after)
    if (!old_members.count(member)) {
      change.added.push_back(member);
      parts.push_back("+" + member);
    }
  change.difference = fmt::format("{}", fmt::join(parts, " "));
}

std::optional<EnvironmentChange> compare_field(const FingerprintField& before, const FingerprintField& after) {
  const bool old_recorded = !before.value.empty(), new_recorded = !after.value.empty();
  if (!old_recorded && !new_recorded) return std::nullopt;
  EnvironmentChange change;
  change.field = before.label;
  change.before = before.value;
  change.after = after.value;
  change.platform = before.counts_for_platform;
  change.unknown = old_recorded != new_recorded;
  if (change.unknown) {
    change.difference = fmt::format("{} -> {}", old_recorded ? before.value : "not recorded",
                                    new_recorded ? after.value : "not recorded");
  } else if (before.is_set && after.is_set) {
    diff_sets(before.members, after.members, change);
    if (change.difference.empty()) return std::nullopt;  // the same set, maybe in another order
  } else {
    if (before.value == after.value) return std::nullopt;
    change.difference = fmt::format("{} -> {}", before.value, after.value);
  }
  return change;
}

}  // namespace

std::vector<FingerprintField> fingerprint_fields(const json& environment) {
  std::vector<FingerprintField> fields;
  for (auto& field : environment_fields(environment))
    fields.push_back({field.label, std::move(field.value), std::move(field.members), field.is_set,
                      !kNotPlatform.count(field.label)});
  return fields;
}

std::vector<EnvironmentChange> environment_changes(const json& before, const json& after) {
  const auto old_fields = fingerprint_fields(before), new_fields = fingerprint_fields(after);
  std::vector<EnvironmentChange> changes;
  for (const auto& label : merged_labels(old_fields, new_fields)) {
    const auto *old_field = find_field(old_fields, label), *new_field = find_field(new_fields, label);
    const auto change = compare_field(old_field ? *old_field : missing_field(*new_field, before),
                                      new_field ? *new_field : missing_field(*old_field, after));
    if (change) changes.push_back(*change);
  }
  return changes;
}

bool is_platform_change(const std::vector<EnvironmentChange>& changes) {
  return std::any_of(changes.begin(), changes.end(), [](const EnvironmentChange& change) { return change.platform; });
}

std::string platform_summary(const std::vector<EnvironmentChange>& changes, const std::string& before_source,
                             const std::string& after_source) {
  std::vector<std::string> differing, not_in_before, not_in_after, other;
  for (const auto& change : changes) {
    if (!change.platform)
      other.push_back(change.field);
    else if (!change.unknown)
      differing.push_back(change.field + " " + change.difference);
    else
      (change.before.empty() ? not_in_before : not_in_after).push_back(change.field);
  }
  if (differing.empty() && not_in_before.empty() && not_in_after.empty()) {
    if (other.empty()) return "Platform unchanged";
    return fmt::format("Platform unchanged; what changed ({}) changes neither bits nor kernel choice",
                       fmt::join(other, ", "));
  }
  std::vector<std::string> parts;
  if (!differing.empty()) parts.push_back(fmt::format("{}", fmt::join(differing, ", ")));
  for (const auto& [fields, source] :
       {std::pair{&not_in_before, before_source.empty() ? "the old snapshot" : before_source},
        {&not_in_after, after_source.empty() ? "the new snapshot" : after_source}})
    if (!fields->empty())
      parts.push_back(
          fmt::format("not recorded in {}: {} (counted as possibly changed)", source, fmt::join(*fields, ", ")));
  return fmt::format("Platform changed: {}", fmt::join(parts, "; "));
}

}  // namespace repro_audit
