#include "plan/cell_grammar.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kind/cell_kind.h"
#include "config/model_spec.h"
#include "plan/cell_key.h"

namespace repro_audit {
namespace {

bool made_of(const std::string& text, const char* extra) {
  return !text.empty() && text.size() <= kMaxNameLength && std::isalnum(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(), [&](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  std::string_view(extra).find(c) != std::string_view::npos;
         });
}

}  // namespace

std::string shown(const std::string& text) {
  return nlohmann::json(text.substr(0, 80)).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

bool is_probe_name(const std::string& text) { return made_of(text, "_-."); }
bool is_variant_name(const std::string& text) { return made_of(text, "_-.=+"); }

bool is_device_name(const std::string& text) {
  if (text == "cpu" || text == "cuda") return true;
  if (text.rfind("cuda:", 0) != 0 || text.size() == 5 || text.size() > 9) return false;
  return std::all_of(text.begin() + 5, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string cell_key_problem(const std::string& key) {
  const auto parsed = parse_cell_key(key);
  if (!parsed) return fmt::format("the key {} is not probe/variant@device|setting=value,...", shown(key));
  Cell named;
  named.key = key;
  named.probe = parsed->probe;
  named.variant = parsed->variant;
  named.device = parsed->device;
  named.settings = parsed->settings;
  if (const auto problem = cell_grammar_problem(named, false); !problem.empty())
    return fmt::format("in the key {}, {}", shown(key), problem);
  return "";
}

std::string cell_grammar_problem(const Cell& cell, bool check_key) {
  if (!is_probe_name(cell.probe)) return fmt::format("probe {} is not a probe name", shown(cell.probe));
  if (!is_variant_name(cell.variant)) return fmt::format("variant {} is not a variant name", shown(cell.variant));
  if (!is_device_name(cell.device)) return fmt::format("device {} is not cpu, cuda or cuda:N", shown(cell.device));
  for (const auto& [name, value] : cell.settings) {
    if (!made_of(name, "_")) return fmt::format("setting {} is not a setting name", shown(name));
    const auto* spec = find_setting(name);
    if (!spec) return fmt::format("setting {} is not one of: {}", shown(name), fmt::join(setting_names(), ", "));
    if (value != kNotApplicable && !is_valid_value(*spec, value))
      return fmt::format("setting {} has the value {}; valid: {}", name, shown(value), describe_values(*spec));
    // py cells' settings (their probes are named py.*): no other cell is ever audited under them.
    if (spec->py_cells_only && value != kNotApplicable && value != spec->default_value &&
        cell.probe.rfind(kPythonProbePrefix, 0) != 0)
      return fmt::format("setting {}={} is a py cell's, and {} is no py cell", name, shown(value), shown(cell.probe));
  }
  if (!std::all_of(cell.label.begin(), cell.label.end(),
                   [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) ||
                            std::string_view("_.:+-=, /").find(c) != std::string_view::npos;
                   }) ||
      cell.label.size() > 4 * kMaxNameLength)
    return fmt::format("label {} holds characters no flag set's label has", shown(cell.label));
  if (auto problem = kind_of(cell).grammar_problem(cell); !problem.empty()) return problem;
  if (check_key) {
    // The key names the cell's probe, variant and device, and settings of the same grammar (files
    // written by hand or by older versions may name a default in it, or a setting the cell lacks).
    const auto parsed = parse_cell_key(cell.key);
    if (!parsed || parsed->probe != cell.probe || parsed->variant != cell.variant || parsed->device != cell.device)
      return fmt::format("key {} is not the key of its probe, variant and device ({})", shown(cell.key),
                         cell_key(cell.probe, cell.variant, cell.device, {}));
    Cell named = cell;
    named.settings = parsed->settings;
    named.label.clear();
    named.model.reset();
    if (const auto problem = cell_grammar_problem(named, false); !problem.empty()) return "in its key, " + problem;
  }
  return "";
}

}  // namespace repro_audit
