#include "report/matrix_layout.h"

#include <algorithm>

namespace repro_audit {
namespace {

// "A", "B", ..., "Z", "AA", "AB", ...
std::string letter(std::size_t index) {
  std::string text;
  for (std::size_t n = index + 1; n > 0; n = (n - 1) / 26)
    text.insert(text.begin(), static_cast<char>('A' + (n - 1) % 26));
  return text;
}

std::size_t line_width(const MatrixLayout& layout, const MatrixLine& line, bool costs,
                       const std::function<std::size_t(std::size_t, bool)>& cell_width, std::size_t first,
                       std::size_t last) {
  std::size_t width = line.fixed;
  for (std::size_t i = first; i < last; ++i)
    width += line.per_column + std::max(header_width(layout, i), cell_width(i, costs));
  return width;
}

// Each label's words on lines of their own; shorter labels leave their lower lines empty.
std::vector<std::vector<std::string>> stacked(const std::vector<std::string>& labels) {
  std::vector<std::vector<std::string>> lines;
  for (std::size_t column = 0; column < labels.size(); ++column) {
    std::size_t line = 0, start = 0;
    const auto& label = labels[column];
    while (start <= label.size()) {
      auto end = label.find(' ', start);
      if (end == std::string::npos) end = label.size();
      if (lines.size() <= line) lines.emplace_back(labels.size());
      lines[line++][column] = label.substr(start, end - start);
      start = end + 1;
    }
  }
  return lines;
}

}  // namespace

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (const unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::vector<std::string> wrap_items(const std::vector<std::string>& items, const std::string& separator,
                                    std::size_t limit) {
  std::vector<std::string> lines;
  std::string line;
  for (const auto& item : items) {
    if (!line.empty() && display_width(line) + display_width(separator) + display_width(item) > limit) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : separator) + item;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::size_t header_width(const MatrixLayout& layout, std::size_t column) {
  std::size_t width = 0;
  for (const auto& line : layout.header) width = std::max(width, display_width(line[column]));
  return width;
}

MatrixLayout fit_matrix(const std::vector<std::string>& columns, const MatrixLine& line, bool costs,
                        const std::function<std::size_t(std::size_t, bool)>& cell_width, std::size_t limit,
                        bool may_stack) {
  MatrixLayout layout;
  layout.header = {columns};
  layout.costs = costs;
  layout.groups = {{0, columns.size()}};
  auto fits = [&](bool with_costs) {
    return line_width(layout, line, with_costs, cell_width, 0, columns.size()) <= limit;
  };
  if (fits(costs)) return layout;
  if (may_stack) {
    layout.header = stacked(columns);
    if (fits(costs)) return layout;
  }
  layout.header = {std::vector<std::string>(columns.size())};
  for (std::size_t i = 0; i < columns.size(); ++i) {
    layout.header[0][i] = letter(i);
    layout.legend.push_back(letter(i) + ": " + columns[i]);
  }
  if (fits(costs)) return layout;
  layout.costs = false;
  if (fits(false)) return layout;
  // Groups of as many columns as fit (at least one each).
  layout.groups.clear();
  std::size_t first = 0;
  while (first < columns.size()) {
    std::size_t last = first + 1;
    while (last < columns.size() && line_width(layout, line, false, cell_width, first, last + 1) <= limit) ++last;
    layout.groups.push_back({first, last});
    first = last;
  }
  return layout;
}

}  // namespace repro_audit
