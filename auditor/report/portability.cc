#include "report/portability.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <map>
#include <set>
#include <utility>

#include "kind/cell_kind.h"
#include "report/report.h"

namespace repro_audit {
namespace {

constexpr std::array<std::pair<PortabilityLevel, const char*>, 5> kNames = {{
    {PortabilityLevel::nondeterministic, "nondeterministic"},
    {PortabilityLevel::run_to_run, "run-to-run"},
    {PortabilityLevel::cross_process, "cross-process"},
    {PortabilityLevel::thread_count_invariant, "thread-count-invariant"},
    {PortabilityLevel::isa_invariant, "isa-invariant"},
}};

PortabilityRole role_of(const std::string& setting) {
  const auto* spec = find_setting(setting);
  return spec ? spec->portability : PortabilityRole::none;
}

// "name=value,..." of the settings with the given role (or every in-process one for `none`).
std::string settings_with_role(const FlagSet& settings, PortabilityRole role, bool only_changed = false) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : settings) {
    if (role_of(name) != role || value == kNotApplicable) continue;
    const auto* spec = find_setting(name);
    if (only_changed && spec && spec->default_value == value) continue;
    parts.push_back(name + "=" + value);
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

bool has_digests(const Verdict& verdict) {
  return runs_agreed(verdict.kind) || verdict.kind == VerdictKind::nondeterministic ||
         verdict.kind == VerdictKind::warns;
}

std::string input_digest(const CellReport& cell) {
  for (const auto& observation : cell.observations)
    if (!observation.input_digest.empty()) return observation.input_digest;
  return "";
}

// Whether the difference starts in the op or already in its seeded inputs (ATen's random number
// kernels are vectorised per CPU capability): both are real, but they call for different fixes.
std::string input_note(const CellReport& first, const CellReport& other) {
  const auto a = input_digest(first), b = input_digest(other);
  if (a.empty() || b.empty()) return "";
  return a == b ? " (same inputs)" : " (the seeded inputs already differ)";
}

// Cells equal in every setting but those of `swept`, grouped; a group whose members' digests differ
// names the values that differ. Returns the first such difference ("threads 1 vs 2"), or "" when none,
// and sets `measured` when some group had two or more members.
std::string first_difference(const std::vector<const CellReport*>& members, PortabilityRole swept, bool& measured) {
  std::map<std::string, std::vector<const CellReport*>> groups;
  for (const auto* member : members) {
    std::string fixed;
    for (const auto& [name, value] : member->cell.settings)
      if (role_of(name) != swept) fixed += name + "=" + value + ";";
    groups[fixed].push_back(member);
  }
  measured = false;
  for (const auto& [fixed, group] : groups) {
    if (group.size() < 2) continue;
    measured = true;
    for (const auto* other : group)
      if (other->verdict.digest != group.front()->verdict.digest)
        return fmt::format("{} vs {} give different bits{}", settings_with_role(group.front()->cell.settings, swept),
                           settings_with_role(other->cell.settings, swept), input_note(*group.front(), *other));
  }
  return "";
}

Portability judge_portability(const std::vector<const CellReport*>& members) {
  Portability result;
  const auto& first = members.front()->cell;
  result.probe = first.probe;
  result.variant = first.variant;
  result.device = first.device;
  for (const auto* member : members)
    if (runs_diverged(member->verdict)) {
      const bool within = member->verdict.divergence_scope != "across-processes";
      result.level = within ? PortabilityLevel::nondeterministic : PortabilityLevel::run_to_run;
      result.limit = fmt::format("{} under {}", within ? "runs in one process disagree" : "processes disagree",
                                 member->cell.label.empty() ? member->cell.key : member->cell.label);
      if (within) return result;
    }
  if (result.level == PortabilityLevel::run_to_run) return result;
  for (const auto* member : members)
    if (member->verdict.processes < 2) {
      result.level = PortabilityLevel::run_to_run;
      result.limit = "one process per cell: cross-process agreement not measured";
      return result;
    }
  // Each axis raises the level when the cells swept it and no two of its values gave other bits.
  struct Step {
    PortabilityRole swept;
    PortabilityLevel reached;
    const char* unmeasured;
  };
  result.level = PortabilityLevel::cross_process;
  for (const auto& step :
       {Step{PortabilityRole::threads, PortabilityLevel::thread_count_invariant, "one thread count measured"},
        Step{PortabilityRole::isa, PortabilityLevel::isa_invariant,
             "one CPU capability measured (--matrix portability sweeps them)"}}) {
    bool measured = false;
    result.limit = first_difference(members, step.swept, measured);
    if (!result.limit.empty()) return result;
    if (!measured) {
      result.limit = step.unmeasured;
      return result;
    }
    result.level = step.reached;
  }
  result.limit = "";
  return result;
}

}  // namespace

const char* to_string(PortabilityLevel level) {
  for (const auto& [value, name] : kNames)
    if (value == level) return name;
  return "?";
}

std::optional<PortabilityLevel> portability_level_from_string(const std::string& text) {
  for (const auto& [value, name] : kNames)
    if (text == name) return value;
  return std::nullopt;
}

std::vector<Portability> find_portability(const std::vector<CellReport>& cells) {
  // Groups in the cells' order: probe, variant, device and the in-process settings.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const CellReport*>> groups;
  for (const auto& report : cells) {
    if (!has_digests(report.verdict)) continue;
    const auto& cell = report.cell;
    const auto key = fmt::format("{}\n{}\n{}\n{}", cell.probe, cell.variant, cell.device,
                                 settings_with_role(cell.settings, PortabilityRole::none));
    auto [it, added] = groups.try_emplace(key);
    if (added) order.push_back(key);
    it->second.push_back(&report);
  }
  std::vector<Portability> entries;
  for (const auto& key : order) {
    const auto& members = groups.at(key);
    auto entry = judge_portability(members);
    kind_of(members.front()->cell).judge_portability(members, entry);
    auto in_process = members.front()->cell.settings;
    in_process.erase("seed");  // another seed is other inputs, not other switches
    entry.settings = settings_with_role(in_process, PortabilityRole::none, true);
    entry.defaults = entry.settings.empty();
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string level_text(const Portability& entry) {
  return entry.invariance.empty() ? std::string(to_string(entry.level))
                                  : fmt::format("{}, {}", to_string(entry.level), entry.invariance);
}

std::map<std::string, const Portability*> row_portability(const std::vector<Portability>& entries) {
  std::map<std::string, const Portability*> rows;
  for (const auto& entry : entries) {
    auto [it, added] = rows.try_emplace(entry.probe + "/" + entry.variant, &entry);
    if (!added && entry.defaults && !it->second->defaults) it->second = &entry;
  }
  return rows;
}

}  // namespace repro_audit
