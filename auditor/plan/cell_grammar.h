#pragma once
// What a cell read from a file may hold. A report, baseline or journal may come from another host or a
// stranger; its cell fields end up in folder names, generated scripts, Markdown and terminal lines, so
// each is checked against the grammar the tool itself produces, and a file that breaks it is malformed.
#include <string>

#include "plan/plan.h"

namespace repro_audit {

// Long enough for every name the tool makes; a name past it is not one of them.
inline constexpr std::size_t kMaxNameLength = 200;

// `text` quoted for an error message, at most 80 characters, control characters escaped.
std::string shown(const std::string& text);

// Probe and model names: letters, digits, '_', '-' and '.', not starting with '.' or '-' (every
// registered probe, "control.racy_accumulate", "model.<name>").
bool is_probe_name(const std::string& text);
// Variant names: the same characters plus '=' and '+' ("f32", "sum-f32", "train.sgd3").
bool is_variant_name(const std::string& text);
// "cpu", "cuda" or "cuda:N".
bool is_device_name(const std::string& text);

// Why `cell` breaks the grammar ("" when it does not): its probe, variant, device, settings (a setting
// this version knows, with one of its values as the tool writes it, or "n/a") and label; with
// `check_key`, also that its key names that probe, variant and device and settings of the same grammar.
std::string cell_grammar_problem(const Cell& cell, bool check_key);

// Why a key alone (a baseline's) breaks the same grammar, or "".
std::string cell_key_problem(const std::string& key);

}  // namespace repro_audit
