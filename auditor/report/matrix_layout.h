#pragma once
// How the verdict matrix fits a line of `limit` characters (a 120-column terminal, a Markdown source
// line): its full column labels when they fit; else each label's words on header lines of their own;
// else letters with a legend (the portability matrix's
// labels are 45-55 characters each); the labels' words stacked on header lines come first; else
// without the costs in the cells; else in groups of columns,
// each a matrix of its own. The terminal and Markdown printers share it; HTML may stay wide.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace repro_audit {

inline constexpr std::size_t kMatrixLineLimit = 120;

// The widths of a printer's line: `fixed` for the row names, the portability column and the
// table's own marks; `per_column` besides each column's width (its separators).
struct MatrixLine {
  std::size_t fixed = 0;
  std::size_t per_column = 2;
};

struct MatrixLayout {
  // The header's lines, each with one text per column: the labels on one line; or each label's words
  // (profile, then each setting) on lines of their own; or letters.
  std::vector<std::vector<std::string>> header;
  std::vector<std::string> legend;  // "A: default cpu_capability=native ..." when letters stand in
  bool costs = true;                // the cells show their costs
  std::vector<std::pair<std::size_t, std::size_t>> groups;  // [first, last) columns printed as one matrix
};

// `cell_width(column, costs)`: the widest cell text of that column, with or without costs.
// `may_stack`: a header may have several lines (a terminal; not a Markdown table).
MatrixLayout fit_matrix(const std::vector<std::string>& columns, const MatrixLine& line, bool costs,
                        const std::function<std::size_t(std::size_t, bool)>& cell_width,
                        std::size_t limit = kMatrixLineLimit, bool may_stack = true);

// A column's header width: its widest header line.
std::size_t header_width(const MatrixLayout& layout, std::size_t column);

// Characters a terminal shows for UTF-8 text (one per code point: the marks are narrow).
std::size_t display_width(const std::string& text);

// `items` joined by `separator` into lines of at most `limit` characters (an item longer than that
// alone on its line): the matrix legend in the terminal and in Markdown.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, const std::string& separator,
                                    std::size_t limit = kMatrixLineLimit);

}  // namespace repro_audit
