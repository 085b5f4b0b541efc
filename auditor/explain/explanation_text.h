#pragma once
// Wording shared by the explanation printers: changed cells grouped per variant, and the lines that
// say what changed besides the bits and what to pin.
#include <string>
#include <vector>

#include "explain/explain.h"

namespace repro_audit {

// The changed cells of one probe/variant@device that tell the same story under several flag sets:
// the same change, outcome (knobs or note), inputs, kernels and portability (digests aside).
struct ExplanationGroup {
  std::vector<const CellExplanation*> cells;  // in the explanation's order; the first stands for all
  const CellExplanation& first() const { return *cells.front(); }
  std::string cell() const;       // the lone cell's key, else "matmul/f32@cpu"
  std::string flag_sets() const;  // "" for a lone cell, else "6 flag sets: defaults, threads=1, ..."
};

std::vector<ExplanationGroup> group_explanations(const Explanation& explanation);

// One line per cell: "reproduced by cpu_capability=default (BEFORE's bits)" or its note.
std::string explanation_headline(const CellExplanation& cell);

// One line under a group's headline: "label: text"; a command is code in Markdown and HTML.
struct DetailLine {
  std::string label;  // "" for a line of text alone
  std::string text;
  bool command = false;
  std::string plain() const { return label.empty() ? text : label + ": " + text; }
};

// What follows the headline: the pin and check when explained; the inputs; the kernels by name; what
// each library keys on and what pins it; the cell under portable settings here, the command for the
// other host and the cost; the candidates tried.
std::vector<DetailLine> group_detail_lines(const ExplanationGroup& group);

}  // namespace repro_audit
