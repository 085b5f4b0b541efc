#pragma once
// Cell keys: the names `compare` and `gate` match cells by, so they must outlive the setting table.
//
// Rule 2 (reports repro-audit.report/2, baselines repro-audit.baseline/2):
//   sum/f32@cpu                                    every setting at its documented default
//   sum/f32@cpu|deterministic_algorithms=on,threads=1   only the settings that differ from their default
// Settings that do not apply to the device ("n/a") never appear. The settings go in name order, not in
// the order of setting_specs(), so where a row is inserted cannot reorder an existing key; and a new
// setting shows up only in cells that move it off its default, so adding one leaves every existing key
// as it was. Changing a setting's documented default does change keys: it needs a key rule 3.
//
// Rule 1 (schema /1): every applicable setting, defaults included, in name order, always after a '|'.
#include <optional>
#include <string>

#include "config/settings.h"

namespace repro_audit {

inline constexpr int kCellKeyRule = 2;

// The only producer of cell keys.
std::string cell_key(const std::string& probe, const std::string& variant, const std::string& device,
                     const FlagSet& settings);

// The parts of a key: `probe/variant@device|a=x,b=y`; nullopt when `key` does not have that shape (the
// settings part is optional). The settings are those the key names, nothing filled in.
struct ParsedKey {
  std::string probe;
  std::string variant;
  std::string device;
  FlagSet settings;
};
std::optional<ParsedKey> parse_cell_key(const std::string& key);

// A rule-1 key (`probe/variant@device|a=x,b=y`) rewritten under the current rule; nullopt when `key`
// does not have that shape. A setting this version does not know stays in the key: its default is unknown.
std::optional<std::string> migrate_rule1_key(const std::string& key);

}  // namespace repro_audit
